/**
 * The parts of a search engine's answer kapi reads (pure). Apart from the client (`search-backend.ts`), so that what
 * reads an answer (the event search) does not load the OpenSearch client into a kapi that names no log store.
 */

export interface Hit {
  _source?: unknown;
}

export interface SearchResponse {
  _scroll_id?: string;
  hits?: { total?: number | { value?: number }; hits?: Hit[] };
  aggregations?: {
    containers?: { value?: number };
    resources?: { value?: number };
    histogram?: { buckets?: { key?: number; doc_count?: number }[] };
  };
}

export function totalOf(answer: SearchResponse): number {
  const total = answer.hits?.total;
  return typeof total === 'number' ? total : (total?.value ?? 0);
}
