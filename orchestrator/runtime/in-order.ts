/**
 * One node's container operations, one after another in the order they were asked for. The fabric
 * asks for a pause and, a moment later, for the resume without waiting (both on the control
 * connection's messages): a resume that looked at the node's state while the daemon was still pausing
 * it would find it running, do nothing, and leave it frozen once the pause landed.
 */
export class InOrder {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `op` after every operation asked for before it has settled; its result or failure is the caller's. */
  run<T>(op: () => Promise<T>): Promise<T> {
    const result = this.tail.then(op);
    this.tail = result.catch(() => {});
    return result;
  }
}
