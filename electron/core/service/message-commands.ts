// Messaging: the MessagingService answers these. Sends wait for a mode switch under way, like
// calls: they must go through the account being switched to.
import type { Result } from '../../../shared/result';
import type { MessagingService } from '../messaging-service';
import type { CommandHandlers } from './handlers';
import type { ModeMachine } from './mode';

export function messageCommands(messaging: MessagingService, mode: ModeMachine) {
  const afterSwitch = async <T>(run: () => Promise<Result<T>>): Promise<Result<T>> => {
    await mode.settled();
    return run();
  };
  return {
    sendMessage: ({ to, content, confirmed }) => afterSwitch(() => messaging.sendMessage(to, content, { confirmed })),
    checkMediaLink: ({ type, link }) => messaging.checkMediaLink(type, link),
    parseTemplate: ({ pasted }) => Promise.resolve(messaging.parseTemplate(pasted)),
    sendTemplate: ({ draft, to, values }) => afterSwitch(() => messaging.sendTemplate(draft, to, values)),
    sendCallButton: (input) => afterSwitch(() => messaging.sendCallButton(input)),
    requestCallPermission: ({ to, bodyText }) => afterSwitch(() => messaging.requestCallPermission(to, bodyText)),
    getConversation: ({ contact }) => Promise.resolve(messaging.lookUp(contact)),
  } satisfies Partial<CommandHandlers>;
}
