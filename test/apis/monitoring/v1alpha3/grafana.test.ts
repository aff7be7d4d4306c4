import { describe, expect, test } from '@jest/globals';
import { dashboardFromGrafana } from '../../../../src/apis/monitoring/v1alpha3/grafana.js';
import { InvalidParameterError } from '../../../../src/server/errors.js';

/** The Grafana import's conversion (KubeSphere 3.4.1's converter), and what it refuses. */
const grafana = {
  title: 'Node',
  refresh: '30s',
  time: { from: 'now-1h', to: 'now' },
  tags: ['a', 3],
  rows: [{ panels: [{ type: 'text', id: 9, title: 'Old row', content: 'hello' }] }],
  panels: [
    {
      type: 'row',
      title: 'A row',
      panels: [
        {
          type: 'graph',
          id: 2,
          title: 'CPU',
          yaxes: [{ format: 'bytes' }, { format: 'short' }],
          targets: [{ expr: 'sum(rate(x{namespace="$namespace"}[$__interval])) > 0', legendFormat: '{{ pod }}' }],
        },
      ],
    },
    { type: 'timeseries', id: 3, title: 'Plain', datasource: { uid: 'p' }, targets: [{ expr: 'up' }, { expr: '' }] },
    { type: 'piechart', title: 'Unknown' },
  ],
};

describe('a Grafana dashboard imported', () => {
  test('when converted, then rows are flattened, panels typed as KubeSphere draws them, targets stripped of Grafana variables', () => {
    const dashboard = dashboardFromGrafana(
      { grafanaDashboardContent: JSON.stringify(grafana), description: 'imported' },
      'node',
      'team-a',
    );
    expect(dashboard).toEqual({
      apiVersion: 'monitoring.kapi.io/v1alpha2',
      kind: 'Dashboard',
      metadata: { name: 'node', namespace: 'team-a', annotations: { 'kapi.io/description': 'imported' } },
      spec: {
        title: 'Node',
        tags: ['a'],
        auto_refresh: '30s',
        time: { from: 'now-1h', to: 'now' },
        panels: [
          {
            id: 2,
            type: 'graph',
            title: 'CPU',
            targets: [{ refId: 1, expr: 'sum(rate(x[3m])) > 0', legendFormat: '{{pod}}', step: '1m' }],
            colors: expect.any(Array),
            yaxes: [{ format: 'Byte' }],
          },
          {
            id: 3,
            type: 'graph',
            title: 'Plain',
            targets: [{ refId: 1, expr: 'up' }],
            colors: expect.any(Array),
            yaxes: [{ format: 'none' }],
          },
          { id: 3, type: 'singlestat', title: 'Unknown' },
          { id: 9, type: 'text', title: 'Old row', content: 'hello' },
        ],
      },
    });
    expect(dashboardFromGrafana({ grafanaDashboardContent: '{}' }, 'c', undefined)).toMatchObject({
      kind: 'ClusterDashboard',
      metadata: { name: 'c', annotations: { 'kapi.io/description': '' } },
      spec: { panels: [] },
    });
  });

  test.each([
    [{ grafanaDashboardUrl: 'http://169.254.169.254/latest/meta-data' }, 'grafanaDashboardUrl'],
    [
      {
        grafanaDashboardUrl: 'https://grafana.com/api/dashboards/1/revisions/1/download',
        grafanaDashboardContent: '{}',
      },
      'grafanaDashboardUrl',
    ],
    [{}, 'grafanaDashboardContent'],
    [{ grafanaDashboardContent: 'not json' }, 'grafanaDashboardContent'],
    [{ grafanaDashboardContent: '[1]' }, 'grafanaDashboardContent'],
    [{ grafanaDashboardContent: '{}', description: 5 }, 'description'],
    [{ grafanaDashboardContent: 'x'.repeat((1 << 20) + 1) }, 'grafanaDashboardContent'],
  ])('when body %# is sent, then a 400 naming the field at fault, and nothing is fetched', (body, field) => {
    let refused: InvalidParameterError | undefined;
    try {
      dashboardFromGrafana(body, 'd', 'ns');
    } catch (error) {
      if (error instanceof InvalidParameterError) refused = error;
      else throw error;
    }
    expect(refused?.parameter).toBe(field);
  });
});
