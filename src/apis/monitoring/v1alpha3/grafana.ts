import { InvalidParameterError } from '../../../server/errors.js';

/**
 * A Grafana dashboard's JSON as a custom monitoring dashboard (KubeSphere 3.4.1's import, kubesphere.io/
 * monitoring-dashboard's converter): its title, time, refresh and tags; its panels with rows flattened, each a graph,
 * singlestat, bargauge, table or text; each Prometheus target's expression with Grafana's template variables taken
 * out as KubeSphere takes them out. Pure. kapi reads the dashboard from the request only: it fetches no URL (a fetch
 * from inside the cluster reaches what the caller cannot). The expressions are not run here; a chart draws each
 * through the ad-hoc query routes, read and confined there.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export const DASHBOARDS_GROUP = 'monitoring.kapi.io';
export const DASHBOARDS_VERSION = 'v1alpha2';
export const DESCRIPTION_ANNOTATION = 'kapi.io/description';
/** The dashboard's JSON read at most (Grafana's largest dashboards are a few hundred KiB). */
export const MAX_GRAFANA_BYTES = 1 << 20;

const KEPT_TYPES = new Set(['graph', 'singlestat', 'bargauge', 'table', 'text']);
/** Grafana 7+'s panel types, as the nearest KubeSphere draws. */
const NEWER_TYPES: Record<string, string> = { timeseries: 'graph', stat: 'singlestat', gauge: 'singlestat' };
const GRAPH_COLORS = ['#60acfc', '#23c2db', '#64d5b2', '#d5ec5a', '#ffb64e', '#fb816d', '#d15c7f'];

export interface GrafanaImport {
  grafanaDashboardUrl?: string;
  grafanaDashboardContent?: string;
  description?: string;
}

/** The object to create: a Dashboard in `namespace`, or a ClusterDashboard; a 400 naming what is wrong. */
export function dashboardFromGrafana(body: unknown, name: string, namespace: string | undefined): Raw {
  const request = (typeof body === 'object' && body !== null ? body : {}) as GrafanaImport;
  if (request.grafanaDashboardUrl)
    throw new InvalidParameterError(
      'grafanaDashboardUrl',
      'kapi fetches no URL for a caller (a fetch from inside the cluster reaches what the caller cannot); send the ' +
        'dashboard’s JSON as grafanaDashboardContent',
    );
  const content = request.grafanaDashboardContent;
  if (typeof content !== 'string' || content.trim() === '')
    throw new InvalidParameterError(
      'grafanaDashboardContent',
      'is required: the Grafana dashboard’s JSON, as a string',
    );
  if (Buffer.byteLength(content) > MAX_GRAFANA_BYTES)
    throw new InvalidParameterError('grafanaDashboardContent', `is larger than ${MAX_GRAFANA_BYTES >> 10} KiB`);
  if (request.description !== undefined && typeof request.description !== 'string')
    throw new InvalidParameterError('description', 'must be a string');
  let grafana: Raw;
  try {
    grafana = JSON.parse(content);
  } catch (error) {
    throw new InvalidParameterError(
      'grafanaDashboardContent',
      `is not JSON: ${(error as Error).message.slice(0, 200)}`,
    );
  }
  if (typeof grafana !== 'object' || grafana === null || Array.isArray(grafana))
    throw new InvalidParameterError('grafanaDashboardContent', 'is not a Grafana dashboard (a JSON object)');
  return {
    apiVersion: `${DASHBOARDS_GROUP}/${DASHBOARDS_VERSION}`,
    kind: namespace === undefined ? 'ClusterDashboard' : 'Dashboard',
    metadata: {
      name,
      ...(namespace !== undefined && { namespace }),
      annotations: { [DESCRIPTION_ANNOTATION]: request.description ?? '' },
    },
    spec: dashboardSpec(grafana),
  };
}

function dashboardSpec(grafana: Raw): Raw {
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const spec: Raw = {};
  if (text(grafana.title)) spec.title = grafana.title;
  if (text(grafana.description)) spec.description = grafana.description;
  if (typeof grafana.editable === 'boolean') spec.editable = grafana.editable;
  if (typeof grafana.sharedCrosshair === 'boolean') spec.shared_crosshair = grafana.sharedCrosshair;
  if (Array.isArray(grafana.tags)) spec.tags = grafana.tags.filter((tag: unknown) => typeof tag === 'string');
  if (text(grafana.refresh)) spec.auto_refresh = grafana.refresh;
  if (text(grafana.timezone)) spec.timezone = grafana.timezone;
  if (text(grafana.time?.from) || text(grafana.time?.to))
    spec.time = {
      ...(text(grafana.time.from) && { from: grafana.time.from }),
      ...(text(grafana.time.to) && { to: grafana.time.to }),
    };
  spec.panels = flattened(grafana).map(panel);
  return spec;
}

/** Every panel, rows' panels in their place (the rows themselves dropped), in the old schema's rows too. */
function flattened(grafana: Raw): Raw[] {
  const panels: Raw[] = [];
  const add = (list: unknown) => {
    for (const item of Array.isArray(list) ? list : []) {
      if (typeof item !== 'object' || item === null) continue;
      if (item.type === 'row') add(item.panels);
      else panels.push(item);
    }
  };
  add(grafana.panels);
  for (const row of Array.isArray(grafana.rows) ? grafana.rows : []) add(row?.panels);
  return panels;
}

function panel(source: Raw, index: number): Raw {
  const given = typeof source.type === 'string' ? source.type : '';
  const type = KEPT_TYPES.has(given) ? given : (NEWER_TYPES[given] ?? 'singlestat');
  const out: Raw = {
    id: Number.isSafeInteger(source.id) ? source.id : index + 1,
    type,
    ...(typeof source.title === 'string' && { title: source.title }),
    ...(typeof source.description === 'string' && source.description && { description: source.description }),
    ...(Number.isSafeInteger(source.decimals) && { decimals: source.decimals }),
  };
  if (type === 'text' && typeof source.content === 'string') out.content = source.content;
  const targets = (Array.isArray(source.targets) ? source.targets : []).filter(
    (target: Raw) => typeof target?.expr === 'string' && target.expr.trim() !== '',
  );
  if (targets.length > 0) out.targets = targets.map(target);
  if (type === 'graph') {
    out.colors = GRAPH_COLORS;
    const axis = Array.isArray(source.yaxes) ? source.yaxes[0] : undefined;
    out.yaxes = [{ format: axisFormat(axis?.format ?? source.fieldConfig?.defaults?.unit) }];
  }
  return out;
}

/**
 * A Prometheus target as KubeSphere converts it: a selector written for Grafana's template variables is taken out
 * (`{namespace="$namespace"}`: the dashboard's project is the namespace its charts are confined to), Grafana's
 * interval variables become 3m, and such a target gets a step of 1m.
 */
function target(source: Raw, index: number): Raw {
  let expr = String(source.expr);
  let step: string | undefined;
  if (/[{}]/.test(expr)) {
    expr = expr
      .replace(/\$__rate_interval|\$__interval|\$interval|\[\$\w+\]/g, (match) =>
        match.startsWith('[') ? '[3m]' : '3m',
      )
      .replace(/\{[^{}]*\}/g, '')
      .replace(/>\d+/g, '');
    step = '1m';
  }
  const legend =
    typeof source.legendFormat === 'string' ? source.legendFormat.replace(/\{\{\s*(\w+)\s*\}\}/g, '{{$1}}') : '';
  return { refId: index + 1, expr, ...(legend && { legendFormat: legend }), ...(step && { step }) };
}

function axisFormat(format: unknown): string {
  if (format === 'bytes' || format === 'decbytes') return 'Byte';
  if (format === 'percentunit') return 'percent (0.0-1.0)';
  return 'none';
}
