import { describe, expect, it } from '@jest/globals';
import { appWithoutCluster } from '../../support/app-without-cluster.js';
import { parseEventQuery } from '../../../src/apis/tenant/events/event-query.js';
import {
  eventRecordOf,
  scopeOf,
  searchEvents,
  type EventRecord,
} from '../../../src/apis/tenant/events/event-search.js';
import request from 'supertest';
import { InvalidParameterError } from '../../../src/server/errors.js';
import { eventRoutes } from '../../../src/apis/tenant/events/event-routes.js';

const NOW = Date.parse('2026-11-29T12:00:00Z') / 1000;
const at = (minutesAgo: number) => new Date((NOW - minutesAgo * 60) * 1000).toISOString().replace('.000', '');

function event(
  namespace: string,
  name: string,
  minutesAgo: number,
  extra: { kind?: string; object?: string; reason?: string; type?: string; message?: string; uid?: string } = {},
): EventRecord {
  return eventRecordOf(
    {
      metadata: { name, namespace, managedFields: [{ manager: 'x' }] },
      involvedObject: {
        kind: extra.kind ?? 'Pod',
        name: extra.object ?? `${name}-pod`,
        namespace,
        uid: extra.uid ?? name,
      },
      reason: extra.reason ?? 'Scheduled',
      message: extra.message ?? `Successfully assigned ${namespace}/${name}`,
      type: extra.type ?? 'Normal',
      lastTimestamp: at(minutesAgo),
      source: { component: 'default-scheduler' },
      count: 1,
    },
    `${namespace}/${name}`,
  );
}

const namespaces = [
  { name: 'shop', workspace: 'retail', createdMs: 0 },
  { name: 'ops', workspace: 'infra', createdMs: 0 },
  { name: 'loose', createdMs: 0 },
  // made again ten minutes ago: its older events were an earlier namespace's
  { name: 'fresh', workspace: 'retail', createdMs: (NOW - 600) * 1000 },
];
const records = [
  event('shop', 'a', 5, { reason: 'BackOff', type: 'Warning', message: 'Back-off restarting failed container' }),
  event('shop', 'b', 30, { kind: 'Deployment', object: 'web', reason: 'ScalingReplicaSet' }),
  event('ops', 'c', 50, { uid: 'b' }),
  event('loose', 'd', 70),
  event('fresh', 'old', 20),
  event('fresh', 'new', 2),
];
const everyone = () => true;
const search = (query: Record<string, string>, allowed: (ns: string) => boolean = everyone, clusterWide = true) => {
  const parsed = parseEventQuery(query, NOW);
  return searchEvents(records, parsed, scopeOf(parsed, namespaces, allowed, clusterWide));
};
const names = (answer: ReturnType<typeof search>) =>
  (answer.query?.records ?? []).map((record: { metadata: { name: string } }) => record.metadata.name);

describe('the event search, pure', () => {
  it('when everything is asked, then newest first, paged, core/v1 Events without managedFields', () => {
    const answer = search({ size: '3' });
    expect(answer.query?.total).toBe(5);
    expect(names(answer)).toEqual(['new', 'a', 'b']);
    expect(answer.query?.records[0]).toMatchObject({
      kind: 'Event',
      apiVersion: 'v1',
      involvedObject: { kind: 'Pod' },
    });
    expect(answer.query?.records[0].metadata.managedFields).toBeUndefined();
    expect(names(search({ sort: 'asc', from: '1', size: '2' }))).toEqual(['c', 'b']);
    // a page past the end: no records, the total as it is
    expect(search({ from: '50' }).query).toEqual({ total: 5, records: [] });
  });

  it('when an event is older than its namespace, then it is not shown (an earlier namespace of the name)', () => {
    expect(names(search({ involved_object_namespace_filter: 'fresh' }))).toEqual(['new']);
  });

  it.each<[string, Record<string, string>, string[]]>([
    ['a workspace', { workspace_filter: 'retail' }, ['new', 'a', 'b']],
    ['a workspace’s text', { workspace_search: 'fra' }, ['c']],
    ['namespaces', { involved_object_namespace_filter: 'ops,loose' }, ['c', 'd']],
    ['a namespace’s text', { involved_object_namespace_search: 'oo' }, ['d']],
    ['an object’s name', { involved_object_name_filter: 'web' }, ['b']],
    ['the start of an object’s name', { involved_object_name_search: 'A-p' }, ['a']],
    ['a kind, in any case', { involved_object_kind_filter: 'deployment' }, ['b']],
    ['a reason, in any case', { reason_filter: 'backoff' }, ['a']],
    ['a reason’s text (case as written)', { reason_search: 'Scaling' }, ['b']],
    ['a message’s text, in any case', { message_search: 'BACK-OFF' }, ['a']],
    ['a type', { type_filter: 'Warning' }, ['a']],
    ['a time range', { start_time: String(NOW - 40 * 60), end_time: String(NOW - 10 * 60) }, ['b']],
    ['the console’s "from the beginning" (start_time=0)', { start_time: '0' }, ['new', 'a', 'b', 'c', 'd']],
  ])('when filtered by %s, then only those events', (_case, query, expected) => {
    expect(names(search(query))).toEqual(expected);
  });

  it('when the caller may list events in one namespace only, then only its events; in none, nothing', () => {
    expect(names(search({}, (ns) => ns === 'ops', false))).toEqual(['c']);
    expect(search({}, () => false, false).query).toEqual({ total: 0, records: [] });
  });

  it('when statistics are asked, then events and distinct involved objects are counted', () => {
    // c involves the same object (uid b) as b
    expect(search({ operation: 'statistics' })).toEqual({ statistics: { resources: 4, events: 5 } });
  });

  it('when a histogram is asked, then counts per interval from the first match to the last, empty buckets included', () => {
    const answer = search({ operation: 'histogram', interval: '30m', start_time: String(NOW - 60 * 60) });
    expect(answer.histogram?.total).toBe(4);
    const buckets = answer.histogram?.buckets ?? [];
    expect(buckets.map((bucket) => bucket.count).reduce((a, b) => a + b, 0)).toBe(4);
    expect(buckets.every((bucket, i) => i === 0 || bucket.time - buckets[i - 1]!.time === 30 * 60_000)).toBe(true);
    expect(search({ operation: 'histogram', reason_filter: 'none' })).toEqual({ histogram: { total: 0, buckets: [] } });
  });

  it.each<[string, Record<string, string>, string]>([
    ['an unknown operation', { operation: 'export' }, 'operation'],
    ['a reversed time range', { start_time: String(NOW - 60), end_time: String(NOW - 120) }, 'end_time'],
    ['a start in the future', { start_time: String(NOW + 60) }, 'start_time'],
    ['a bad interval', { interval: '5x' }, 'interval'],
    ['a page past the window', { from: '9995', size: '10' }, 'size'],
    ['an unknown type', { type_filter: 'Fatal' }, 'type_filter'],
    ['a size that is no number', { size: 'ten' }, 'size'],
  ])('when the query has %s, then a 400 naming the parameter', (_case, query, parameter) => {
    let error: unknown;
    try {
      parseEventQuery(query, NOW);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidParameterError);
    expect((error as InvalidParameterError).message).toContain(parameter);
  });
});

describe('the event search route', () => {
  const appWith = (namespaceCount: number, clusterWide: boolean, reviewed: string[]) =>
    appWithoutCluster({
      user: { username: 'viewer', groups: [] },
      platformRoutes: [
        eventRoutes({
          authorizer: {
            authorize: async (_user, attributes) => {
              if (attributes.namespace) reviewed.push(attributes.namespace);
              return { allowed: attributes.namespace === undefined ? clusterWide : attributes.namespace === 'ns-7' };
            },
          },
          namespaces: {
            synced: true,
            list: () => Array.from({ length: namespaceCount }, (_, i) => ({ name: `ns-${i}`, createdAt: 0 })),
            get: () => undefined,
          } as never,
          events: { search: async (_query, scope) => ({ query: { total: scope.size, records: [...scope.keys()] } }) },
        }),
      ],
    });

  it('when a caller who may not list events cluster-wide searches, then each namespace the filters leave is reviewed', async () => {
    const reviewed: string[] = [];
    const res = await request(appWith(20, false, reviewed))
      .get('/kapis/tenant.kapi.io/v1alpha2/events')
      .expect(200);
    expect(res.body.query.records).toEqual(['ns-7']);
    expect(reviewed).toHaveLength(20);
    const narrowed: string[] = [];
    await request(appWith(20, false, narrowed))
      .get('/kapis/tenant.kapi.io/v1alpha2/events?involved_object_namespace_filter=ns-3,ns-7')
      .expect(200);
    expect(narrowed.sort()).toEqual(['ns-3', 'ns-7']);
  });

  it('when such a caller’s query covers more than 500 namespaces, then a 400 asks to name them; cluster-wide, no review', async () => {
    const res = await request(appWith(501, false, []))
      .get('/kapis/tenant.kapi.io/v1alpha2/events')
      .expect(400);
    expect(res.body).toMatchObject({
      kind: 'Status',
      details: { causes: [{ field: 'involved_object_namespace_filter' }] },
    });
    const reviewed: string[] = [];
    const all = await request(appWith(501, true, reviewed))
      .get('/kapis/tenant.kapi.io/v1alpha2/events')
      .expect(200);
    expect(all.body.query.total).toBe(502); // every namespace, and events of none
    expect(reviewed).toEqual([]);
  });
});
