// The call state machine: one pure reducer that decides (style.md 5, ARCHITECTURE.md "Decisions
// worth keeping"). `applyCallEvent(book, event) → { book, changed, effects }`: the effects say what
// must happen (claim the call on the relay, ask for a decline verdict, accept, initiate, reject or
// terminate, start or cancel a deadline, answer the command that waits); the CallCoordinator only
// runs them and feeds their outcomes back as events.
//
// incoming: ringing → answering → connecting → active → ended
// outgoing: dialing → calling → remote_ringing → connecting → active → ended
//
// A bridged call can be in a transfer, consult or three-way call (`transfer`, calls/transfers.ts):
// the relay tells how it goes (remote.transfer), and a transfer or consult that rings this agent is
// a ringing incoming call of its own (`tr:<transferId>`) whose answer goes to the relay, never to
// the gateway. A call handed on ends `transferred` with no terminate: the customer stays.
//
// A bridged call this agent is in outlives the window that carried its audio: when its leg goes it
// rejoins with a new one (`rejoin`, calls/rejoin.ts), hold and transfer kept; a direct call ends.
//
// An active call can be on hold (`heldSince`): the window sends the hold music on the call's own
// sender and mutes the customer; the gateway knows nothing of it (it has no hold). An agent has at
// most two busy calls, and at most one of them is not on hold: answering, dialing or resuming a
// second call holds the other in the same step.
//
// Where things are (shared/calls/):
// - types.ts: the call as every process sees it (`CallState`), the events (`CallEvent`) and the
//   effects (`CallEffect`), the one definition of a busy call;
// - record.ts: the call as the main process holds it (`CallRecord`): beside each phase, what is still
//   open about it with the relay or the gateway (its claim, the request under way, the command
//   waiting, the end the gateway is owed); a call a previous run left live (`Leftover`); `publicCall`;
// - handlers.ts: one handler per event type, each returning the call after it, its effects and its
//   reply (`Step`); steps.ts: the steps several handlers share (ending a call, owing the gateway an
//   end, letting a live call go);
// - rejoin.ts: a bridged call whose leg went (its window, the app, its network) rejoins with a new
//   leg instead of ending ("Rejoining…", `rejoin`), within REJOIN_WINDOW_MS;
// - oversight.ts: who hears a bridged call besides its agents, as the relay tells them: the team's
//   recording of it (`recording`) and the supervisors who joined it (`monitors`);
// - mute.ts: the agent's microphone muted on a call (`muted`), kept with the call for every window;
// - transfers.ts: when a transfer keeps the call out of the agent's hands, and what the agent's
//   transfer commands may act on;
// - book.ts: all calls of one agent (`CallBook`) and delivery: routing by call id or local id, events
//   waiting for an id, tombstones, pruning, and what a crash would leave owed (`owedOnCrash`).
export * from './calls/types';
export { deadlineOf, owedEnd, publicCall, REJOIN_GRACE_MS, rejoinDeadline } from './calls/record';
export type { AnsweringOpen, CallRecord, DialingOpen, EndedOpen, EndedRecord, Leftover, LiveRecord, RejoinOpen } from './calls/record';
export type { Step } from './calls/steps';
export { TRANSFER_OVER, TRANSFER_REFUSALS, TRANSFER_UNDER_WAY, transferableCall, transferToActOn, transferUnderWay } from './calls/transfers';
export type { TransferAction } from './calls/transfers';
export { agentNotBackText, canRejoin, restorable } from './calls/rejoin';
export { applyCallEvent, emptyBook, liveCalls, owedOnCrash, pruneBook, reduceCall } from './calls/book';
export type { BookChange, CallBook, CallStep, OwedOnCrash } from './calls/book';
