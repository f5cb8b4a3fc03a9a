/*
 * The `deploy` jobs of the tasks fixture (both halves): each `deploy` call's task, and the tests
 * waiting for one to start, so a test waits for a state instead of a time.
 */

/** A `deploy` job: one task. */
export interface DeployJob {
  target: string;
  taskId: string;
  /** The session that created it ('' in the stateless 2026-07-28 half). */
  session: string;
  /** The credential that created it. */
  credential: string | undefined;
}

/** The jobs started so far, and who waits for which target. */
export class DeployJobs {
  private readonly jobs: DeployJob[] = [];
  private readonly waiters: Array<{ target: string; resolve(job: DeployJob): void }> = [];

  /** A job started: kept, and its waiters resolved. */
  add(job: DeployJob): void {
    this.jobs.push(job);
    for (const waiter of this.waiters.filter(w => w.target === job.target)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(job);
    }
  }

  /** The job of `taskId`, if a deploy made it. */
  ofTask(taskId: string): DeployJob | undefined {
    return this.jobs.find(job => job.taskId === taskId);
  }

  /** Resolves with the job of `target` once it has started. */
  started(target: string): Promise<DeployJob> {
    const job = this.jobs.find(j => j.target === target);
    if (job !== undefined) return Promise.resolve(job);
    return new Promise(resolve => this.waiters.push({ target, resolve }));
  }

  /** The started job of `target`; throws when none was. */
  get(target: string): DeployJob {
    const job = this.jobs.find(j => j.target === target);
    if (job === undefined) throw new Error(`No deploy of ${target} was started`);
    return job;
  }
}
