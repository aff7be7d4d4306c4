import { listNodes } from '../../examples/platform-client/list-nodes.js';
import { startE2E, type E2E } from '../e2e/harness.js';

let e2e: E2E;
let reader: string;
const PASSWORD = 'Client-pw-1';

beforeAll(async () => {
  e2e = await startE2E();
  reader = await e2e.createUser('client-reader', PASSWORD);
  await e2e.grant(reader, [{ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }]);
}, 60_000);

afterAll(async () => {
  await e2e?.stop();
});

test('when the client generated from the platform document logs in and lists nodes, then it gets the nodes', async () => {
  const all = await listNodes(e2e.kapiUrl, { username: reader, password: PASSWORD });
  expect(all.totalItems).toBeGreaterThan(0);
  expect(all.items).toHaveLength(all.totalItems);
  const first = all.items.map((node) => node.metadata.name).sort()[0]!;

  const page = await listNodes(
    e2e.kapiUrl,
    { username: reader, password: PASSWORD },
    { names: [first, 'absent'], sortBy: 'name', ascending: true, limit: 5 },
  );
  expect(page).toMatchObject({ totalItems: 1, items: [{ metadata: { name: first } }] });
});

test('when the password is wrong, then the client reports the RFC 6749 error', async () => {
  await expect(listNodes(e2e.kapiUrl, { username: reader, password: 'wrong' })).rejects.toThrow(
    'login failed: invalid_grant: invalid username or password',
  );
});
