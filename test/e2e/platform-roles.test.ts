/**
 * One authorizer (SPEC §17): for each built-in platform role, what its holder may do is the same whether asked
 * through the console (the menus it draws from the role's templates, `users/{u}/globalroles`), through kubectl via kapi
 * (`kubectl auth can-i` at kapi's HTTPS listener with the holder's token) or straight at kube-apiserver (`kubectl auth
 * can-i --as` with the cluster's administrator credentials on a real cluster; the same SubjectAccessReview on the
 * sandbox, whose listener is plain HTTP and gets no token from kubectl).
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bindGlobalRole, deleteIgnoringMissing, kubeAllows, startE2E, waitFor, type E2E } from './harness.js';
import { Kubectl, kubectlBinary } from './forwarding-kubectl.js';
import { KapiCaller } from './identity-http.js';
import { assertTarget } from './target.js';

const PASSWORD = 'e2e-Roles-Passw0rd';
const ROLES = ['platform-admin', 'platform-regular', 'platform-self-provisioner'] as const;

/** A question, and the console module and action whose menu or button stands for the same right. */
interface Question {
  verb: string;
  resource: string;
  group: string;
  module: string;
  action: 'view' | 'manage' | 'create';
}
const QUESTIONS: Question[] = [
  { verb: 'list', resource: 'nodes', group: '', module: 'clusters', action: 'view' },
  { verb: 'delete', resource: 'namespaces', group: '', module: 'clusters', action: 'manage' },
  { verb: 'list', resource: 'users', group: 'iam.kapi.io', module: 'users', action: 'view' },
  { verb: 'create', resource: 'users', group: 'iam.kapi.io', module: 'users', action: 'manage' },
  { verb: 'list', resource: 'globalroles', group: 'iam.kapi.io', module: 'roles', action: 'view' },
  { verb: 'create', resource: 'workspacetemplates', group: 'tenant.kapi.io', module: 'workspaces', action: 'create' },
];
/** What each role's holder is expected to be allowed, as the built-in roles say (so no answer is vacuous). */
const EXPECTED: Record<(typeof ROLES)[number], boolean[]> = {
  'platform-admin': [true, true, true, true, true, true],
  'platform-regular': [false, false, false, false, false, false],
  'platform-self-provisioner': [false, false, false, false, false, true],
};

let e2e: E2E;
let kubectl: Kubectl;
const holders = new Map<string, { user: string; token: string }>();
const made: string[] = [];
const caller = new KapiCaller();
const qualified = (q: Question) => (q.group ? `${q.resource}.${q.group}` : q.resource);

/** `kubectl auth can-i` at kube-apiserver itself, as the holder (or its SubjectAccessReview on the sandbox). */
async function straight(user: string, q: Question): Promise<boolean> {
  if (e2e.target === 'cluster') {
    const run = spawnSync(
      kubectlBinary(),
      ['auth', 'can-i', q.verb, qualified(q), `--as=${user}`, '--as-group=system:authenticated'],
      { env: { ...process.env }, encoding: 'utf8', timeout: 20_000 },
    );
    expect(['yes', 'no']).toContain(run.stdout.trim());
    return run.stdout.trim() === 'yes';
  }
  return kubeAllows(e2e.admin, user, { verb: q.verb, group: q.group, resource: q.resource });
}

/** `kubectl auth can-i` through kapi, with the holder's own token. */
async function throughKapi(token: string, q: Question): Promise<boolean> {
  const run = await kubectl.run(['auth', 'can-i', q.verb, qualified(q)], token);
  expect(['yes', 'no']).toContain(run.stdout.trim());
  return run.stdout.trim() === 'yes';
}

/** The console's menus for the holder: each template's `iam.kapi.io/role-template-rules`, `{module: action}`. */
async function consoleRules(user: string, token: string): Promise<Map<string, Set<string>>> {
  const answer = await caller.get<{ metadata: { annotations?: Record<string, string> } }[]>(
    `${e2e.kapiUrl}/kapis/iam.kapi.io/v1alpha2/users/${user}/globalroles`,
    token,
  );
  expect(answer.status).toBe(200);
  const rules = new Map<string, Set<string>>();
  for (const template of answer.body) {
    const text = template.metadata.annotations?.['iam.kapi.io/role-template-rules'] ?? '{}';
    for (const [module, action] of Object.entries(JSON.parse(text) as Record<string, string>)) {
      rules.set(module, (rules.get(module) ?? new Set()).add(action));
    }
  }
  return rules;
}

/** The console offers an action when the module's rules hold it, or `manage` (which includes every action). */
const consoleOffers = (rules: Map<string, Set<string>>, q: Question) =>
  rules.get(q.module)?.has(q.action) === true || rules.get(q.module)?.has('manage') === true;

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  kubectl = Kubectl.create(e2e.kapiHttpsUrl, e2e.caFile);
  for (const role of ROLES) {
    const user = await e2e.createUser(`holder-${role}`, PASSWORD);
    made.push(await bindGlobalRole(e2e.admin, user, role));
    holders.set(role, { user, token: (await caller.login(e2e.kapiUrl, user, PASSWORD)).access_token });
  }
  // every realized binding in effect at kube-apiserver before any question is asked
  await waitFor(async () => {
    for (const role of ROLES) {
      const realized = await e2e.admin
        .request({
          path: `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/kapi:globalrolebinding:${holders.get(role)!.user}-${role}`,
        })
        .then(() => true)
        .catch(() => false);
      if (!realized) return false;
    }
    return (await straight(holders.get('platform-admin')!.user, QUESTIONS[1]!)) === true;
  });
}, 90_000);

afterAll(async () => {
  kubectl?.cleanup();
  for (const path of made) await deleteIgnoringMissing(e2e.admin, path);
  await e2e?.stop();
});

describe('each built-in platform role: the console, kubectl through kapi and kubectl straight agree', () => {
  it.each(ROLES)(
    '%s',
    async (role) => {
      const { user, token } = holders.get(role)!;
      const rules = await consoleRules(user, token);
      const answers: string[] = [];
      for (const q of QUESTIONS) {
        const views = {
          console: consoleOffers(rules, q),
          kapi: await throughKapi(token, q),
          kube: await straight(user, q),
        };
        answers.push(`${q.verb} ${qualified(q)}: console ${views.console}, kapi ${views.kapi}, kube ${views.kube}`);
      }
      const expected = QUESTIONS.map(
        (q, i) =>
          `${q.verb} ${qualified(q)}: console ${EXPECTED[role][i]}, kapi ${EXPECTED[role][i]}, kube ${EXPECTED[role][i]}`,
      );
      expect(answers).toEqual(expected);
    },
    60_000,
  );
});
