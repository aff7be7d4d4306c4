import type { LookupFailure } from '../../../registry/registry-client.js';

/**
 * The console's image lookup answered as KubeSphere 3.4 answers it (pure): a repository's tags paged (newest-looking
 * first: reverse lexical order, unless `ascending`), and a registry's failure as the caller's answer.
 */
export interface TagPageQuery {
  page: number;
  /** -1: every tag. */
  limit: number;
  ascending: boolean;
}

/** Reads `page`, `limit` and `ascending` as KubeSphere does (page 1, every tag, descending); or why not. */
export function tagPageQuery(query: Record<string, unknown>): TagPageQuery | { error: string } {
  const integer = (name: string, fallback: number) => {
    const value = query[name];
    if (value === undefined || value === '') return fallback;
    if (typeof value !== 'string' || !/^-?[0-9]{1,9}$/.test(value)) return undefined;
    return Number(value);
  };
  const page = integer('page', 1);
  const limit = integer('limit', -1);
  if (page === undefined || page < 1) return { error: 'page must be a whole number from 1' };
  if (limit === undefined || limit < -1 || limit === 0)
    return { error: 'limit must be a positive whole number, or -1 for every tag' };
  const ascending = query.ascending;
  if (ascending !== undefined && ascending !== 'true' && ascending !== 'false')
    return { error: 'ascending must be true or false' };
  return { page, limit, ascending: ascending === 'true' };
}

/** One page of tags, and how many there are. A page past the end is empty. */
export function tagPage(tags: readonly string[], query: TagPageQuery): { tags: string[]; total: number } {
  const ordered = query.ascending ? [...tags] : [...tags].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
  if (query.limit === -1) return { tags: ordered, total: tags.length };
  const start = (query.page - 1) * query.limit;
  return { tags: ordered.slice(start, start + query.limit), total: tags.length };
}

/**
 * The status of a registry's failure: an image or repository it does not hold is 404; everything else (credentials
 * refused, no such registry, no answer in time, an answer not read) is the caller's input, 400, as KubeSphere answers
 * it, never kapi's 5xx: the registry is the caller's choice, not a part of the cluster. A refusal of the registry is
 * not 401 either: that would say the caller's own token was refused.
 */
export const failureStatus = (failure: LookupFailure): 400 | 404 => (failure.failure === 'not-found' ? 404 : 400);
