// Which page carries each call's audio now, for the browser host: one owner per call. Two tabs of
// one agent may both answer a call's legs; only the page whose answer was taken last has the media,
// so only its going leaves the call without audio (a bridged call then rejoins, any other ends).

interface Claim {
  /** Commands for the call still on their way from this page. */
  inFlight: number;
  /** The page went while they were on their way and the call was reported gone then. */
  reported: boolean;
}

/**
 * The owner of a call is the page whose answerCall, startCall or rejoinCall was taken last. A page's
 * claim counts from the moment it arrives: a page that goes while its claim is on its way, for a call
 * no other page owns, takes the call's audio with it. A claim taken after its page went is that
 * page's going too, reported when the claim is taken.
 */
export class CallMediaOwners<Page extends object> {
  private readonly owners = new Map<string, Page>();
  private readonly claims = new Map<Page, Map<string, Claim>>();
  private readonly gone = new WeakSet<Page>();

  /** A media command for `localId` arrived from `page`. */
  claim(page: Page, localId: string): void {
    let ofPage = this.claims.get(page);
    if (ofPage === undefined) {
      ofPage = new Map();
      this.claims.set(page, ofPage);
    }
    const claim = ofPage.get(localId);
    if (claim === undefined) ofPage.set(localId, { inFlight: 1, reported: false });
    else claim.inFlight += 1;
  }

  /**
   * The command's result: `taken`, the page owns the call now. True when the call must be reported
   * gone now: the claim was taken after its page went, and that going did not report it.
   */
  settle(page: Page, localId: string, taken: boolean): boolean {
    const ofPage = this.claims.get(page);
    const claim = ofPage?.get(localId);
    if (ofPage !== undefined && claim !== undefined) {
      claim.inFlight -= 1;
      if (claim.inFlight === 0) ofPage.delete(localId);
      if (ofPage.size === 0) this.claims.delete(page);
    }
    if (!taken) return false;
    if (!this.gone.has(page)) {
      this.owners.set(localId, page);
      return false;
    }
    // The page that took the call last is gone: no open page carries its audio, whoever had it before.
    // Its going reported the call already, unless another page took the call in between.
    const takenBetween = this.owners.delete(localId);
    return claim?.reported !== true || takenBetween;
  }

  /** `page` went: the calls whose audio it carried, now no page's. */
  leave(page: Page): string[] {
    this.gone.add(page);
    const calls: string[] = [];
    for (const [localId, owner] of this.owners) {
      if (owner !== page) continue;
      this.owners.delete(localId);
      calls.push(localId);
    }
    for (const [localId, claim] of this.claims.get(page) ?? []) {
      // Another page took this call's audio; this page's claim on its way is refused or replaces it, and is reported if taken.
      if (this.owners.has(localId)) continue;
      claim.reported = true;
      if (!calls.includes(localId)) calls.push(localId);
    }
    return calls;
  }
}
