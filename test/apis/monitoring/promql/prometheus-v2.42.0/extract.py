#!/usr/bin/env python3
"""Extract a PromQL query corpus from the Prometheus source tree at a given git revision.

Usage:
    python3 extract.py [--git-dir DIR] [--rev REV] [--out DIR]

Defaults: --git-dir /work/.mirror/prometheus+prometheus/repo --rev v2.42.0 --out /tmp/promql-corpus

Files are read with `git show REV:PATH` (read-only; no work tree needed).

Outputs (in --out):
  valid.json          distinct query strings that parse at REV
                      (parse_test.go testExpr entries without fail:true, TestNaNExpression,
                       TestExtractSelectors inputs, printer_test.go TestExprString inputs,
                       and eval/eval_ordered/eval_fail expressions of promql/testdata/*.test)
  valid_sources.json  [{query, sources:[...]}] same order as valid.json, with provenance
  invalid.json        decoded inputs of testExpr entries with fail:true
  invalid_detail.json [{input, errMsg, line}] for the fail entries
  invalid_non_utf8.json  fail entries whose input is not valid UTF-8 (hex/latin-1 encoded)
  printer.json        [{input, expected}] from printer_test.go TestExprString
                      (expected = out if non-empty else in, as the test does)
  prettier.json       [{input, expected, test, maxCharactersPerLine}] from prettier_test.go (bonus)
"""
import argparse
import json
import os
import re
import subprocess
import sys

# ---------------------------------------------------------------------------
# Minimal Go tokenizer
# ---------------------------------------------------------------------------

TOKEN_RE = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*.*?\*/)
  | (?P<raw>`[^`]*`)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<rune>'(?:[^'\\\n]|\\.)*')
  | (?P<num>(?:0[xX][0-9a-fA-F_]+|[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>:=|\.\.\.|&&|\|\||<-|==|!=|<=|>=|\+\+|--|[-+*/%&|^<>=!(){}\[\],;:.])
    """,
    re.VERBOSE | re.DOTALL,
)


class Tok:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line

    def __repr__(self):
        return f"Tok({self.kind},{self.text!r},{self.line})"


def tokenize(src):
    toks = []
    pos, line = 0, 1
    while pos < len(src):
        m = TOKEN_RE.match(src, pos)
        if not m:
            raise SyntaxError(f"cannot tokenize at line {line}: {src[pos:pos+40]!r}")
        kind = m.lastgroup
        text = m.group()
        if kind not in ("ws", "lcomment", "bcomment"):
            toks.append(Tok(kind, text, line))
        line += text.count("\n")
        pos = m.end()
    return toks


SIMPLE_ESC = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, "'": 39, '"': 34}


def decode_go_string(lit, errors="strict"):
    """Decode a Go string literal (raw or interpreted) to a Python str.

    Go strings are byte sequences; \\x and octal escapes produce raw bytes. The result is
    decoded as UTF-8; invalid UTF-8 raises ValueError (caller decides what to do).
    """
    if lit.startswith("`"):
        # Raw string: carriage returns are discarded per the Go spec.
        return lit[1:-1].replace("\r", "")
    assert lit.startswith('"') and lit.endswith('"'), lit
    body = lit[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        e = body[i + 1]
        if e in SIMPLE_ESC:
            if e == "'":
                raise ValueError("\\' not valid in Go string literal")
            out.append(SIMPLE_ESC[e])
            i += 2
        elif e == "x":
            out.append(int(body[i + 2:i + 4], 16))
            i += 4
        elif e in "01234567":
            out.append(int(body[i + 1:i + 4], 8))
            i += 4
        elif e == "u":
            out += chr(int(body[i + 2:i + 6], 16)).encode("utf-8")
            i += 6
        elif e == "U":
            out += chr(int(body[i + 2:i + 10], 16)).encode("utf-8")
            i += 10
        else:
            raise ValueError(f"unknown escape \\{e} in {lit!r}")
    return out.decode("utf-8", errors)  # strict by default; "surrogateescape" keeps raw bytes


# ---------------------------------------------------------------------------
# Tiny evaluator for the Go expressions that appear as field values
# (string literals, +, strings.Repeat, fmt.Sprintf, float64(), math.MaxInt64/MinInt64)
# ---------------------------------------------------------------------------

GO_CONSTS = {
    "math.MaxInt64": 2**63 - 1,
    "math.MinInt64": -(2**63),
    "true": True,
    "false": False,
}


class Unsupported(Exception):
    pass


def go_sprintf(fmt, args):
    out, ai, i = [], 0, 0
    while i < len(fmt):
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        verb = fmt[i + 1]
        if verb == "%":
            out.append("%")
        elif verb == "f":
            out.append("%f" % float(args[ai]))
            ai += 1
        elif verb == "d":
            out.append("%d" % int(args[ai]))
            ai += 1
        elif verb in "sv" and isinstance(args[ai], str):
            out.append(args[ai])
            ai += 1
        else:
            raise Unsupported(f"Sprintf verb %{verb}")
        i += 2
    return "".join(out)


class Evaluator:
    def __init__(self, toks, errors="strict"):
        self.toks, self.i, self.errors = toks, 0, errors

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def next(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, text):
        t = self.next()
        if t.text != text:
            raise Unsupported(f"expected {text!r}, got {t}")

    def parse(self):
        v = self.expr()
        if self.peek() is not None:
            raise Unsupported(f"trailing tokens: {self.toks[self.i:]}")
        return v

    def expr(self):
        v = self.unary()
        while self.peek() is not None and self.peek().text in ("+", "-"):
            op = self.next().text
            r = self.unary()
            if op == "+":
                if isinstance(v, float) or isinstance(r, float):
                    v = float(v) + float(r)
                else:
                    v = v + r
            else:
                if isinstance(v, str) or isinstance(r, str):
                    raise Unsupported("string minus")
                v = float(v) - float(r) if (isinstance(v, float) or isinstance(r, float)) else v - r
        return v

    def unary(self):
        t = self.peek()
        if t.text == "-":
            self.next()
            return -self.unary()
        return self.primary()

    def primary(self):
        t = self.next()
        if t.kind in ("raw", "str"):
            return decode_go_string(t.text, self.errors)
        if t.kind == "num":
            s = t.text.replace("_", "")
            return float(s) if any(ch in s for ch in ".eE") and not s.startswith("0x") else int(s, 0)
        if t.text == "(":
            v = self.expr()
            self.expect(")")
            return v
        if t.kind == "ident":
            name = t.text
            while self.peek() is not None and self.peek().text == ".":
                self.next()
                name += "." + self.next().text
            if self.peek() is not None and self.peek().text == "(":
                self.next()
                args = []
                while self.peek().text != ")":
                    args.append(self.expr())
                    if self.peek().text == ",":
                        self.next()
                self.expect(")")
                return self.call(name, args)
            if name in GO_CONSTS:
                return GO_CONSTS[name]
            raise Unsupported(f"identifier {name}")
        raise Unsupported(f"token {t}")

    def call(self, name, args):
        if name == "strings.Repeat":
            return args[0] * args[1]
        if name == "fmt.Sprintf":
            return go_sprintf(args[0], args[1:])
        if name == "float64":
            return float(args[0])
        raise Unsupported(f"call {name}")


def eval_go_expr(toks, errors="strict"):
    return Evaluator(toks, errors).parse()


# ---------------------------------------------------------------------------
# Composite-literal walker
# ---------------------------------------------------------------------------

OPEN, CLOSE = "({[", ")}]"


def find_literal_start(toks, start_idx):
    """Given the index of the `[]struct` ... position, return index of the '{' that opens
    the composite literal body (i.e. the '{' after the struct type's closing '}')."""
    i = start_idx
    while toks[i].text != "struct":
        i += 1
    # struct { ... }
    i += 1
    assert toks[i].text == "{"
    depth = 0
    while True:
        if toks[i].text == "{":
            depth += 1
        elif toks[i].text == "}":
            depth -= 1
            if depth == 0:
                break
        i += 1
    i += 1
    assert toks[i].text == "{", toks[i]
    return i


def walk_elements(toks, lbrace_idx, positional_fields=None):
    """Yield dicts {field: [tokens], '_line': line} for each element of a slice composite literal.

    Keyed fields (`name: value`) are recognised at element depth; unkeyed elements are mapped to
    positional_fields if given.
    """
    i = lbrace_idx + 1
    while True:
        t = toks[i]
        if t.text == "}":
            return
        if t.text == ",":
            i += 1
            continue
        assert t.text == "{", f"expected element '{{' got {t}"
        elem_line = t.line
        # collect element fields
        i += 1
        fields = {"_line": elem_line}
        pos_index = 0
        while toks[i].text != "}":
            if toks[i].text == ",":
                i += 1
                continue
            key = None
            if toks[i].kind == "ident" and toks[i + 1].text == ":":
                key = toks[i].text
                i += 2
            # value tokens until ',' or '}' at depth 0
            depth = 0
            vstart = i
            while True:
                tt = toks[i].text
                if depth == 0 and tt in (",", "}"):
                    break
                if tt in OPEN:
                    depth += 1
                elif tt in CLOSE:
                    depth -= 1
                i += 1
            vtoks = toks[vstart:i]
            if key is None:
                if positional_fields is None:
                    raise SyntaxError(f"unkeyed field at line {toks[vstart].line}")
                key = positional_fields[pos_index]
                pos_index += 1
            fields[key] = vtoks
        i += 1  # past element '}'
        yield fields


def find_token_seq(toks, seq, start=0):
    n = len(seq)
    for i in range(start, len(toks) - n + 1):
        if all(toks[i + k].text == seq[k] for k in range(n)):
            return i
    return -1


def find_func(toks, name):
    return find_token_seq(toks, ["func", name, "("])


# ---------------------------------------------------------------------------
# Extraction
# ---------------------------------------------------------------------------

def git_show(git_dir, rev, path):
    return subprocess.run(["git", "-C", git_dir, "show", f"{rev}:{path}"],
                          check=True, capture_output=True).stdout.decode("utf-8")


def git_ls(git_dir, rev, path):
    out = subprocess.run(["git", "-C", git_dir, "ls-tree", "--name-only", f"{rev}", path + "/"],
                         check=True, capture_output=True).stdout.decode("utf-8")
    return [l for l in out.splitlines() if l]


def tok_text(vtoks):
    return " ".join(t.text for t in vtoks)


def extract_parse_test(src, warnings):
    toks = tokenize(src)
    idx = find_token_seq(toks, ["var", "testExpr", "="])
    lb = find_literal_start(toks, idx)
    valid, invalid, non_utf8 = [], [], []
    for el in walk_elements(toks, lb):
        line = el["_line"]
        if "input" not in el:
            warnings.append(f"parse_test.go:{line}: element without input")
            continue
        try:
            inp = eval_go_expr(el["input"])
        except UnicodeDecodeError as e:
            # Input is not valid UTF-8 (Go string with \xNN bytes): cannot be a JSON string.
            raw = eval_go_expr(el["input"], "surrogateescape").encode("utf-8", "surrogateescape")
            fail = eval_go_expr(el["fail"]) if "fail" in el else False
            errmsg = eval_go_expr(el["errMsg"]) if "errMsg" in el else None
            non_utf8.append({"input_go_literal": tok_text(el["input"]), "input_hex": raw.hex(),
                             "input_latin1": raw.decode("latin-1"), "fail": fail,
                             "errMsg": errmsg, "line": line})
            warnings.append(f"parse_test.go:{line}: non-UTF-8 input {tok_text(el['input'])!r} "
                            f"-> invalid_non_utf8.json ({e.reason})")
            continue
        except (Unsupported, ValueError) as e:
            warnings.append(f"parse_test.go:{line}: skipped input {tok_text(el['input'])!r}: {e}")
            continue
        fail = False
        if "fail" in el:
            fail = eval_go_expr(el["fail"])
            assert isinstance(fail, bool)
        errmsg = None
        if "errMsg" in el:
            try:
                errmsg = eval_go_expr(el["errMsg"])
            except (Unsupported, ValueError) as e:
                errmsg = None
                warnings.append(f"parse_test.go:{line}: could not evaluate errMsg: {e}")
        if fail:
            invalid.append({"input": inp, "errMsg": errmsg, "line": line})
        else:
            if "expected" not in el:
                warnings.append(f"parse_test.go:{line}: non-fail entry without expected")
            valid.append({"input": inp, "line": line})

    # TestNaNExpression: ParseExpr("NaN") must succeed.
    fi = find_func(toks, "TestNaNExpression")
    j = find_token_seq(toks, ["ParseExpr", "("], fi)
    nan_q = decode_go_string(toks[j + 2].text)
    valid.append({"input": nan_q, "line": toks[j].line, "source": "parse_test.go:TestNaNExpression"})

    # TestExtractSelectors: unkeyed {input, expected} elements, all ParseExpr'd with NoError.
    fi = find_func(toks, "TestExtractSelectors")
    j = find_token_seq(toks, ["[", "...", "]", "struct"], fi)
    lb = find_literal_start(toks, j)
    for el in walk_elements(toks, lb, positional_fields=["input", "expected"]):
        valid.append({"input": eval_go_expr(el["input"]), "line": el["_line"],
                      "source": "parse_test.go:TestExtractSelectors"})
    return valid, invalid, non_utf8


def extract_in_out_tables(src, func_name):
    """For functions with `inputs := []struct{ in, out string }{...}` tables."""
    toks = tokenize(src)
    fi = find_func(toks, func_name)
    j = find_token_seq(toks, ["inputs", ":=", "[", "]", "struct"], fi)
    lb = find_literal_start(toks, j)
    rows = []
    for el in walk_elements(toks, lb):
        inp = eval_go_expr(el["in"])
        out = eval_go_expr(el["out"]) if "out" in el else ""
        rows.append({"in": inp, "out": out, "line": el["_line"]})
    return rows


def all_test_funcs(src):
    return re.findall(r"^func (Test\w+)\(", src, re.M)


# promql/test.go at v2.42.0:
#   patEvalInstant = regexp.MustCompile(`^eval(?:_(fail|ordered))?\s+instant\s+(?:at\s+(.+?))?\s+(.+)$`)
# and getLines() trims whitespace and blanks lines starting with '#'.
PAT_EVAL_INSTANT = re.compile(r"^eval(?:_(fail|ordered))?\s+instant\s+(?:at\s+(.+?))?\s+(.+)$")


def extract_test_file(text):
    rows = []
    for n, raw in enumerate(text.split("\n"), 1):
        l = raw.strip()  # Go strings.TrimSpace (close enough for ASCII whitespace)
        if l.startswith("#"):
            continue
        if not l.startswith("eval"):
            continue
        m = PAT_EVAL_INSTANT.match(l)
        if not m:
            raise SyntaxError(f"eval line does not match patEvalInstant: {l!r}")
        rows.append({"expr": m.group(3), "mod": m.group(1) or "", "line": n})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--git-dir", default="/work/.mirror/prometheus+prometheus/repo")
    ap.add_argument("--rev", default="v2.42.0")
    ap.add_argument("--out", default="/tmp/promql-corpus")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    warnings = []

    commit = subprocess.run(["git", "-C", args.git_dir, "rev-parse", args.rev + "^{commit}"],
                            check=True, capture_output=True, text=True).stdout.strip()

    # ---- parse_test.go
    pt_valid, pt_invalid, pt_non_utf8 = extract_parse_test(
        git_show(args.git_dir, args.rev, "promql/parser/parse_test.go"), warnings)

    # ---- printer_test.go
    printer_src = git_show(args.git_dir, args.rev, "promql/parser/printer_test.go")
    printer_rows = extract_in_out_tables(printer_src, "TestExprString")
    printer = [{"input": r["in"], "expected": r["out"] if r["out"] != "" else r["in"]}
               for r in printer_rows]

    # ---- prettier_test.go (bonus)
    prettier_src = git_show(args.git_dir, args.rev, "promql/parser/prettier_test.go")
    prettier = []
    for fn in all_test_funcs(prettier_src):
        m = re.search(r"func " + fn + r"\(t \*testing\.T\) \{\s*maxCharactersPerLine = (\d+)", prettier_src)
        mcpl = int(m.group(1)) if m else None
        for r in extract_in_out_tables(prettier_src, fn):
            prettier.append({"input": r["in"], "expected": r["out"], "test": fn,
                             "maxCharactersPerLine": mcpl})

    # ---- promql/testdata/*.test
    eval_rows = []
    for path in git_ls(args.git_dir, args.rev, "promql/testdata"):
        if not path.endswith(".test"):
            continue
        for r in extract_test_file(git_show(args.git_dir, args.rev, path)):
            r["file"] = os.path.basename(path)
            eval_rows.append(r)

    # ---- assemble valid corpus with provenance
    order, sources = [], {}

    def add(q, src):
        if q not in sources:
            sources[q] = []
            order.append(q)
        if src not in sources[q]:
            sources[q].append(src)

    for v in pt_valid:
        add(v["input"], v.get("source", "parse_test.go:testExpr") + f"@L{v['line']}")
    for r in printer_rows:
        add(r["in"], f"printer_test.go:TestExprString@L{r['line']}")
    for r in eval_rows:
        tag = "eval" + (("_" + r["mod"]) if r["mod"] else "")
        add(r["expr"], f"testdata/{r['file']}:{tag}@L{r['line']}")

    invalid_order, invalid_seen = [], set()
    for v in pt_invalid:
        if v["input"] not in invalid_seen:
            invalid_seen.add(v["input"])
            invalid_order.append(v["input"])

    overlap = [q for q in invalid_order if q in sources]
    if overlap:
        warnings.append(f"queries both valid and invalid: {overlap!r}")

    def dump(name, obj):
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            json.dump(obj, f, ensure_ascii=False, indent=1)
            f.write("\n")

    dump("valid.json", order)
    dump("valid_sources.json", [{"query": q, "sources": sources[q]} for q in order])
    dump("invalid.json", invalid_order)
    dump("invalid_detail.json", pt_invalid)
    dump("invalid_non_utf8.json", pt_non_utf8)
    dump("printer.json", printer)
    dump("prettier.json", prettier)

    prettier_new = {p["input"] for p in prettier} - set(sources)
    stats = {
        "rev": args.rev,
        "commit": commit,
        "parse_test_valid_entries": sum(1 for v in pt_valid if "source" not in v),
        "parse_test_extra_valid (NaN + ExtractSelectors)": sum(1 for v in pt_valid if "source" in v),
        "parse_test_fail_entries": len(pt_invalid),
        "parse_test_non_utf8_entries (not in invalid.json)": len(pt_non_utf8),
        "printer_test_entries": len(printer_rows),
        "testdata_eval_lines": len(eval_rows),
        "testdata_eval_lines_by_mod": {m: sum(1 for r in eval_rows if r["mod"] == m)
                                       for m in sorted({r["mod"] for r in eval_rows})},
        "valid_distinct": len(order),
        "invalid_distinct": len(invalid_order),
        "printer_pairs": len(printer),
        "prettier_pairs": len(prettier),
        "prettier_inputs_not_in_valid": len(prettier_new),
        "warnings": warnings,
    }
    dump("stats.json", stats)
    json.dump(stats, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
