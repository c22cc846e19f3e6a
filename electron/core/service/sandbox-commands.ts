// The embedded sandbox's simulated customers (sandbox mode only): they call, hang up, write, press
// call buttons, leave voicemails and ask to be called back through the sandbox's control API.
import { text } from '../../../shared/i18n/text';
import { errText, type Result } from '../../../shared/result';
import type { SandboxControlClient } from '../sandbox-control-client';
import type { CommandHandlers } from './handlers';
import type { ModeMachine } from './mode';
import type { Runtime } from './runtime';

export function sandboxCommands(mode: ModeMachine) {
  const withSandbox = async <T>(run: (sandbox: SandboxControlClient, runtime: Runtime) => Promise<Result<T>>): Promise<Result<T>> => {
    const runtime = await mode.settled();
    if (!runtime?.sandbox) return errText('not_available', text('service.sandboxOnly'));
    return run(runtime.sandbox, runtime);
  };
  return {
    simulateIncomingCall: ({ number }) => withSandbox((s) => s.incoming(number)),
    simulateCustomerHangUp: ({ localId }) =>
      withSandbox((sandbox, runtime) => {
        const callId = runtime.coordinator.call(localId)?.callId;
        if (callId === undefined) return Promise.resolve(errText('not_found', text('calls.noGatewayCallId', { localId })));
        return sandbox.hangUp(callId);
      }),
    simulateInboundMessage: ({ number, text }) => withSandbox((s) => s.inbound(number, text)),
    simulatePressCallButton: ({ number }) => withSandbox((s) => s.pressCallButton(number)),
    simulateVoicemail: ({ number }) => withSandbox((s) => s.voicemail(number)),
    simulateCallbackRequest: ({ number }) => withSandbox((s) => s.callbackRequest(number)),
  } satisfies Partial<CommandHandlers>;
}
