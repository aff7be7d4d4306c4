import { Client, errors } from '@opensearch-project/opensearch';
import { BadRequestError, ServiceUnavailableError } from '../../../../server/errors.js';
import type { Interval } from '../interval.js';
import type { Answer, Histogram, LogBackend, LogRecord, LogSearch, QueryResult, Statistics } from '../log-backend.js';
import type { SortOrder } from '../query.js';
import { sourceField, type SearchFields } from './fields.js';
import { indexNames } from './index-names.js';
import { exportBody, histogramBody, searchBody, statisticsBody } from './query-body.js';
import { totalOf, type Hit, type SearchResponse } from './search-response.js';

/** The store's address and credentials; `credentials` is read when needed (a Secret may be created or rotated later). */
export interface SearchBackendOptions {
  url: string;
  indexPrefix: string;
  fields: SearchFields;
  credentials: () => Promise<SearchCredentials>;
  requestTimeoutMs?: number;
  /** Records per scroll page of an export. */
  exportPageSize?: number;
}

export interface SearchCredentials {
  username?: string;
  password?: string;
  /** PEM CA bundle the store's certificate is checked against (never skipped, unlike KubeSphere's client). */
  ca?: string;
}

const SCROLL = '1m';

/**
 * Logs from OpenSearch or Elasticsearch, as Fluent Bit's Kubernetes filter indexes them for KubeSphere, through the
 * official OpenSearch client. Query bodies come from the pure builders in query-body.ts; this class only sends them,
 * reads the answers and maps the store's failures to Status errors (a store that is down or refuses kapi is a 503).
 */
export class SearchBackend implements LogBackend {
  readonly name = 'search';
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;

  constructor(private readonly options: SearchBackendOptions) {}

  async query(search: LogSearch, page: { from: number; size: number; sort: SortOrder }): Promise<Answer<QueryResult>> {
    const body = searchBody(search.filter, search.scope, this.options.fields, page);
    const answer = await this.search(search, body);
    const records = (answer.hits?.hits ?? []).map((hit) => this.record(hit));
    return { result: { total: totalOf(answer), records } };
  }

  async statistics(search: LogSearch): Promise<Answer<Statistics>> {
    const answer = await this.search(search, statisticsBody(search.filter, search.scope, this.options.fields));
    return { result: { containers: answer.aggregations?.containers?.value ?? 0, logs: totalOf(answer) } };
  }

  async histogram(search: LogSearch, interval: Interval): Promise<Answer<Histogram>> {
    const body = histogramBody(search.filter, search.scope, this.options.fields, interval);
    const answer = await this.search(search, body);
    const histograms = (answer.aggregations?.histogram?.buckets ?? []).map((bucket) => ({
      time: bucket.key ?? 0,
      count: bucket.doc_count ?? 0,
    }));
    return { result: { total: totalOf(answer), histograms } };
  }

  /** A scroll, one page at a time: the next page is asked for only once the client has taken the last. */
  async export(search: LogSearch, sort: SortOrder, write: (text: string) => Promise<void>): Promise<object> {
    const size = this.options.exportPageSize ?? 1000;
    const body = exportBody(search.filter, search.scope, this.options.fields, sort, size);
    let answer = await this.search(search, body, SCROLL);
    let scrollId = answer._scroll_id;
    try {
      for (;;) {
        const hits = answer.hits?.hits ?? [];
        if (hits.length === 0) return {};
        await write(hits.map((hit) => `${sourceField(hit._source, this.options.fields.log) ?? ''}\n`).join(''));
        if (!scrollId) return {};
        const id = scrollId;
        answer = await this.call<SearchResponse>(search.signal, (client) =>
          client.scroll({ body: { scroll_id: id, scroll: SCROLL } }),
        );
        scrollId = answer._scroll_id ?? scrollId;
      }
    } finally {
      // Frees the store's scroll context at once, also when the client went away.
      if (scrollId) {
        const id = scrollId;
        await this.connect()
          .then((client) => client.clearScroll({ body: { scroll_id: [id] } }))
          .catch(() => undefined);
      }
    }
  }

  /**
   * One search in the same store under another index prefix (the events' daily indices beside the logs'): the body
   * as given, the answer as the store gives it.
   */
  searchIndices(
    indexPrefix: string,
    range: { startTime: number | undefined; endTime: number },
    body: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<SearchResponse> {
    const index = indexNames(indexPrefix, range.startTime, range.endTime).join(',');
    return this.call<SearchResponse>(signal, (client) =>
      client.search({ index, body, ignore_unavailable: true, allow_no_indices: true }),
    );
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.close();
  }

  private search(search: LogSearch, body: Record<string, unknown>, scroll?: string): Promise<SearchResponse> {
    const index = indexNames(this.options.indexPrefix, search.filter.startTime, search.filter.endTime).join(',');
    return this.call<SearchResponse>(search.signal, (client) =>
      client.search({ index, body, ignore_unavailable: true, allow_no_indices: true, ...(scroll && { scroll }) }),
    );
  }

  private record(hit: Hit): LogRecord {
    const { fields } = this.options;
    const field = (name: string) => sourceField(hit._source, name) ?? '';
    return {
      log: field(fields.log),
      time: field(fields.time),
      namespace: field(fields.namespace),
      pod: field(fields.pod),
      container: field(fields.container),
    };
  }

  /** Sends one request; the client going away aborts it. Store failures become Status errors. */
  private async call<T>(
    signal: AbortSignal,
    send: (client: Client) => Promise<{ body: unknown }> & { abort?: () => void },
  ): Promise<T> {
    const client = await this.connect();
    signal.throwIfAborted();
    const request = send(client);
    const abort = () => request.abort?.();
    signal.addEventListener('abort', abort, { once: true });
    try {
      return (await request).body as T;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw this.translate(error);
    } finally {
      signal.removeEventListener('abort', abort);
    }
  }

  private connect(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.options
      .credentials()
      .then((credentials) => {
        this.client = new Client({
          node: this.options.url,
          requestTimeout: this.options.requestTimeoutMs ?? 30_000,
          maxRetries: 1,
          ...(credentials.username !== undefined && {
            auth: { username: credentials.username, password: credentials.password ?? '' },
          }),
          ssl: { rejectUnauthorized: true, ...(credentials.ca && { ca: credentials.ca }) },
        });
        return this.client;
      })
      .finally(() => {
        this.connecting = undefined;
      });
    return this.connecting;
  }

  /** What the caller may know: never the store's credentials, only which store and what kind of failure. */
  private translate(error: unknown): Error {
    const store = new URL(this.options.url).host;
    if (error instanceof errors.ResponseError) {
      if (error.statusCode === 401 || error.statusCode === 403) {
        // Credentials may have been rotated: read them again for the next request.
        void this.close();
        return new ServiceUnavailableError(`the log store ${store} refused kapi's credentials`);
      }
      if (error.statusCode === 400) {
        return new BadRequestError(`the log store ${store} could not run this query: ${reasonOf(error.body)}`);
      }
      return new ServiceUnavailableError(`the log store ${store} answered HTTP ${error.statusCode}`);
    }
    if (error instanceof ServiceUnavailableError) return error;
    return new ServiceUnavailableError(`the log store ${store} could not be reached`);
  }
}

function reasonOf(body: unknown): string {
  const error = (body as { error?: { root_cause?: { reason?: string }[]; reason?: string } } | undefined)?.error;
  return error?.root_cause?.[0]?.reason ?? error?.reason ?? 'rejected';
}
