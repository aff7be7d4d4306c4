/**
 * Kinds whose API a cluster may not serve (issue 39: volume snapshots and their classes and contents, composed
 * Applications), on the sandbox and real kube-apiservers: where the cluster serves none, the console's lists are empty
 * and an object is not found (no error, no wait for a watch that would never sync); once the APIs are installed, their
 * objects are listed with KubeSphere's statuses and filters; removed again, the lists are empty again.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createKindSamples, READ_EVERY_KIND } from './kind-samples.js';
import { startE2E, waitFor, type E2E } from './harness.js';
import { KapiCaller } from './identity-http.js';
import { installOptionalApis, optionalApiSamples, removeOptionalApis } from './optional-apis.js';

const PASSWORD = 'e2e-Optional-Passw0rd';
const BASE = '/kapis/resources.kapi.io/v1alpha3';
let e2e: E2E;
let token: string;
const caller = new KapiCaller();

type Listed = { items?: { metadata: { name: string } }[]; totalItems?: number };

beforeAll(async () => {
  e2e = await startE2E();
  const reader = await e2e.createUser('optional-reader', PASSWORD);
  await e2e.grant(reader, READ_EVERY_KIND);
  token = (await caller.login(e2e.kapiUrl, reader, PASSWORD)).access_token;
  // a run that stopped half-way may have left them: this suite starts where the cluster serves none
  await removeOptionalApis(e2e.admin);
}, 60_000);

afterAll(async () => {
  if (e2e) await removeOptionalApis(e2e.admin);
  await e2e?.stop();
});

const listOf = (path: string) => caller.get<Listed>(`${e2e.kapiUrl}${BASE}/${path}`, token);
const namesOf = async (path: string) => ((await listOf(path)).body.items ?? []).map((item) => item.metadata.name);

describe('kinds of APIs a cluster may not serve', () => {
  it('when the cluster serves neither the snapshot nor the application API, then each list is empty and each object not found', async () => {
    for (const collection of [
      `namespaces/${e2e.runId}/volumesnapshots`,
      'volumesnapshots',
      'volumesnapshotclasses',
      'volumesnapshotcontents',
      `namespaces/${e2e.runId}/applications`,
    ]) {
      const listed = await listOf(`${collection}?sortBy=createTime&limit=10`);
      expect({ collection, status: listed.status, body: listed.body }).toEqual({
        collection,
        status: 200,
        body: { items: [], totalItems: 0 },
      });
      expect((await listOf(`${collection}/sample`)).status).toBe(404);
    }
  });

  it('when the APIs are installed and objects made, then they are listed with KubeSphere’s statuses and filters; removed, the lists are empty again', async () => {
    await installOptionalApis(e2e.admin);
    const samples = optionalApiSamples(e2e);
    await createKindSamples(e2e, samples);
    const snapshots = `namespaces/${e2e.runId}/volumesnapshots`;
    // within kapi's discovery interval, and once its watch has them
    await waitFor(async () => (await namesOf(snapshots)).includes('sample-snap'));
    expect(await namesOf(`${snapshots}?status=ready`)).toEqual(['sample-snap']);
    expect(await namesOf(`${snapshots}?status=creating`)).toEqual([]);
    expect(await namesOf(`${snapshots}?persistentVolumeClaimName=sample-pvc`)).toEqual(['sample-snap']);
    expect(await namesOf(`${snapshots}?persistentVolumeClaimName=other`)).toEqual([]);
    expect((await listOf(`${snapshots}?status=broken`)).status).toBe(400);
    const className = `${e2e.runId}-snapclass`;
    await waitFor(async () => (await namesOf('volumesnapshotclasses?driver=hostpath.csi.k8s.io')).includes(className));
    await waitFor(async () =>
      (await namesOf('volumesnapshotcontents?readyToUse=false')).includes(`${e2e.runId}-snapcontent`),
    );
    expect(await namesOf('volumesnapshotcontents?readyToUse=true')).not.toContain(`${e2e.runId}-snapcontent`);
    // as KubeSphere matches them: a class's driver and policy, and a content's fields, in any case; a snapshot's
    // class exactly
    expect(await namesOf('volumesnapshotclasses?driver=HostPath.CSI.k8s.io&deletionPolicy=DELETE')).toContain(
      className,
    );
    expect(await namesOf('volumesnapshotclasses?driver=other.csi.k8s.io')).not.toContain(className);
    // each class with how many snapshots name it (sample-snap, in this run's namespace)
    await waitFor(async () => {
      const page = (await listOf(`volumesnapshotclasses?name=${className}`)).body as unknown as {
        items: { metadata: { annotations?: Record<string, string> } }[];
      };
      return page.items[0]?.metadata.annotations?.['kapi.io/snapshot-count'] === '1';
    });
    expect(
      await namesOf(`volumesnapshotcontents?volumeSnapshotClassName=${className.toUpperCase()}&readyToUse=FALSE`),
    ).toContain(`${e2e.runId}-snapcontent`);
    expect(await namesOf(`${snapshots}?volumeSnapshotClassName=${className}`)).toEqual(['sample-snap']);
    expect(await namesOf(`${snapshots}?volumeSnapshotClassName=${className.toUpperCase()}`)).toEqual([]);
    await waitFor(async () => (await namesOf(`namespaces/${e2e.runId}/applications`)).includes('sample-app'));
    expect((await listOf(`namespaces/${e2e.runId}/applications/sample-app`)).status).toBe(200);

    // each group's discovery is asked again within kapi's interval: then its lists are empty again
    await removeOptionalApis(e2e.admin);
    await waitFor(async () => (await listOf(snapshots)).body.totalItems === 0);
    await waitFor(async () => (await listOf(`namespaces/${e2e.runId}/applications`)).body.totalItems === 0);
    expect((await listOf(`namespaces/${e2e.runId}/applications`)).body).toEqual({ items: [], totalItems: 0 });
  }, 90_000);
});
