/**
 * The gate the provider fakes put before a call's last step: while it is on, calls wait there until
 * release(), so a test decides when slots free up (test/integration/dialers-providers.test.ts).
 */
export function callHold() {
  let holding = false;
  const held: (() => void)[] = [];
  return {
    /** Queues `next` and answers true while holding; false when the call may go on now. */
    stops(next: () => void): boolean {
      if (holding) held.push(next);
      return holding;
    },
    /** While on, every call waits before its last step until release(). */
    hold(on: boolean) {
      holding = on;
    },
    /** Calls waiting at their last step. */
    get held() {
      return held.length;
    },
    /** Lets every waiting call end (new ones wait again while hold is on). */
    release() {
      for (const next of held.splice(0)) next();
    },
  };
}
