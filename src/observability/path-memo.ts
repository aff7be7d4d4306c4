/**
 * What a request path is (its route, whether it is long-running), worked out once and remembered: clients ask the
 * same few paths over and over. Bounded whatever paths clients send: all is forgotten at once when full, and long
 * paths are never kept.
 */
export class PathMemo<V extends NonNullable<unknown> | null> {
  private readonly answers = new Map<string, V>();

  constructor(
    private readonly work: (path: string) => V,
    private readonly capacity = 4096,
    private readonly longest = 256,
  ) {}

  get(path: string): V {
    let answer = this.answers.get(path);
    if (answer === undefined) {
      answer = this.work(path);
      if (this.answers.size >= this.capacity) this.answers.clear();
      if (path.length <= this.longest) this.answers.set(path, answer);
    }
    return answer;
  }
}
