/**
 * A query kapi refuses to read or send. Its own module, so that the query limits and enforcement (which the route
 * table reads at start) do not load the PromQL grammar, which only an ad-hoc query needs.
 */
export class PromQLError extends Error {
  constructor(
    message: string,
    /** Where in the query (a character offset), when known. */
    readonly position?: number,
  ) {
    super(message);
  }
}
