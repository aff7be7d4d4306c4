import { createHash } from 'node:crypto';

/**
 * kapi's own pages: the login page and the page that explains why a sign-in cannot go on. Pure: values in, HTML and
 * the Content-Security-Policy that goes with it out.
 *
 * Everything a page needs is in the page: no script at all, no external font, image or stylesheet. The one
 * stylesheet is inline and allowed by its hash, so the policy can forbid everything else (`default-src 'none'`), and
 * `frame-ancestors 'none'` keeps the page out of other sites' frames (clickjacking, RFC 9700 §4.16). Every value
 * placed in the HTML is escaped.
 */
const STYLE = `
:root{color-scheme:light dark;--bg:#f3f5f8;--card:#fff;--text:#16191d;--muted:#5a6472;--line:#d4dae2;--accent:#1f5fd6;
--accent-hover:#174cb0;--on-accent:#fff;--error:#b3261e;--error-bg:#fdf1f0;--focus:#1f5fd6}
@media (prefers-color-scheme:dark){:root{--bg:#0e1114;--card:#161a1f;--text:#e7eaee;--muted:#9aa4b0;--line:#2b323b;
--accent:#6f9bff;--accent-hover:#8cb0ff;--on-accent:#0b0d10;--error:#ffb4ab;--error-bg:#2b1513;--focus:#8cb0ff}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;padding:24px 16px;
background:var(--bg);color:var(--text);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{width:100%;max-width:400px}
.card{background:var(--card);border:1px solid var(--line);border-radius:14px;padding:32px 28px;
box-shadow:0 1px 2px rgba(16,24,40,.05),0 12px 32px rgba(16,24,40,.08)}
.brand{display:flex;align-items:center;gap:10px;margin:0 0 28px;font-weight:650;font-size:19px;letter-spacing:.2px}
.brand svg{flex:none}
h1{font-size:24px;line-height:1.25;margin:0 0 6px;font-weight:650}
.lead{color:var(--muted);margin:0 0 24px;font-size:15px;overflow-wrap:anywhere}
.lead strong{color:var(--text);font-weight:600}
.field{margin:0 0 18px}
label{display:block;font-weight:550;font-size:14px;margin:0 0 6px}
input{display:block;width:100%;padding:11px 12px;border:1px solid var(--line);border-radius:9px;background:var(--card);
color:inherit;font:inherit}
input[aria-invalid=true]{border-color:var(--error)}
input:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.alert{background:var(--error-bg);color:var(--error);border:1px solid currentColor;border-radius:9px;padding:10px 12px;
margin:0 0 20px;font-size:14px}
.alert strong{display:block;font-weight:600}
button,.button{display:block;width:100%;padding:11px 16px;border-radius:9px;border:1px solid transparent;font:inherit;
font-weight:600;line-height:1.5;text-align:center;cursor:pointer;text-decoration:none}
.primary{background:var(--accent);color:var(--on-accent)}
.primary:hover{background:var(--accent-hover)}
.secondary{background:transparent;border-color:var(--line);color:var(--text)}
.secondary:hover{border-color:var(--muted)}
.divider{display:flex;align-items:center;gap:12px;color:var(--muted);font-size:13px;margin:22px 0}
.divider::before,.divider::after{content:"";flex:1;border-top:1px solid var(--line)}
.providers{display:grid;gap:10px}
.cancel{margin:18px 0 0;text-align:center}
.link{display:inline;width:auto;padding:4px;border:0;background:none;color:var(--muted);font-weight:500;font-size:14px;
text-decoration:underline;text-underline-offset:3px}
.link:hover{color:var(--text)}
p.detail{color:var(--muted);font-size:14px;margin:12px 0 0}
@media (max-width:440px){body{padding:0;align-items:stretch}.card{border-radius:0;border-width:0;min-height:100vh;
padding:28px 20px;box-shadow:none}}
`;

const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

const LOGO = `<svg width="28" height="28" viewBox="0 0 28 28" aria-hidden="true" focusable="false"><rect width="28" height="28" rx="7" fill="#1f5fd6"/><path d="M9 7v14M9 14l8-7M9 14l8 7" stroke="#fff" stroke-width="2.6" stroke-linecap="round" stroke-linejoin="round" fill="none"/></svg>`;

/** The Content-Security-Policy of a page: nothing but its own stylesheet; forms post to kapi and, after a sign-in, redirect to `formTargets`. */
export function pageSecurityPolicy(formTargets: readonly string[] = []): string {
  return [
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    "img-src 'none'",
    `form-action 'self'${formTargets.map((target) => ` ${target}`).join('')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export interface ProviderButton {
  /** What the button says after "Continue with". */
  label: string;
  href: string;
}

export interface LoginPageView {
  /** The OAuth client the user signs in to. */
  clientName: string;
  /** The sealed authorization request and the CSRF token, posted back with the form. */
  request: string;
  csrf: string;
  /** The user name to show again (never the password). */
  username?: string;
  error?: { title: string; detail?: string };
  providers: readonly ProviderButton[];
  /** The user this browser is signed in as, offered with one click (a public client, no password typed). */
  continueAs?: string;
}

export function loginPage(view: LoginPageView): string {
  const invalid = view.error ? ' aria-invalid="true" aria-describedby="login-error"' : '';
  // one autofocus: the one-click button when offered, else the first empty field
  const focusUser = view.continueAs === undefined && !view.username;
  const focusPassword = view.continueAs === undefined && !!view.username;
  const hidden = `<input type="hidden" name="request" value="${attribute(view.request)}"><input type="hidden" name="csrf" value="${attribute(view.csrf)}">`;
  const providers =
    view.providers.length === 0
      ? ''
      : `<div class="divider">or</div><div class="providers">${view.providers
          .map((p) => `<a class="button secondary" href="${attribute(p.href)}">Continue with ${text(p.label)}</a>`)
          .join('')}</div>`;
  return document(
    'Sign in',
    `<h1>Sign in</h1>
<p class="lead">to continue to <strong>${text(view.clientName)}</strong></p>
${view.error ? alert(view.error, 'login-error') : ''}${
      view.continueAs === undefined
        ? ''
        : `<form method="post" action="/oauth/login">${hidden}<button class="primary" type="submit" name="action" value="continue" autofocus>Continue as ${text(view.continueAs)} to ${text(view.clientName)}</button></form>
<div class="divider">or sign in as someone else</div>`
    }<form method="post" action="/oauth/login">${hidden}
<div class="field"><label for="username">User name or e-mail</label><input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="254" value="${attribute(view.username ?? '')}"${invalid}${focusUser ? ' autofocus' : ''}></div>
<div class="field"><label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${invalid}${focusPassword ? ' autofocus' : ''}></div>
<button class="primary" type="submit" name="action" value="login">Sign in</button>
</form>${providers}
<form class="cancel" method="post" action="/oauth/login">${hidden}<button class="link" type="submit" name="action" value="cancel">Cancel and return to ${text(view.clientName)}</button></form>`,
  );
}

export interface ErrorPageView {
  title: string;
  detail: string;
  /** What the user can do about it. */
  hint?: string;
}

export function errorPage(view: ErrorPageView): string {
  return document(
    view.title,
    `<h1>${text(view.title)}</h1>
<div class="alert" role="alert"><strong>${text(view.detail)}</strong></div>
${view.hint ? `<p class="detail">${text(view.hint)}</p>` : ''}`,
  );
}

function alert(error: { title: string; detail?: string }, id: string): string {
  return `<div class="alert" role="alert" id="${id}"><strong>${text(error.title)}</strong>${error.detail ? text(error.detail) : ''}</div>\n`;
}

function document(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>${text(title)} · kapi</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<div class="card">
<div class="brand">${LOGO}<span>kapi</span></div>
${body}
</div>
</main>
</body>
</html>
`;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function text(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

const attribute = text;
