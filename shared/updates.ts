// Updates of the installed desktop app (electron/desktop/update-service.ts): where they come from
// (a feed URL, empty = off), which channel, and where an update stands. An update never restarts
// the app by itself: once downloaded it is `ready`, and the agent's "Restart to update"
// (restartToUpdate) installs it, refused while a call is live; quitting installs it too.
import { z } from 'zod';
import { list, ruleTextSchema, text, type RuleText } from './i18n/text';
import { encodeText, ruleMessage } from './validation';

export const UPDATE_CHANNELS = ['stable', 'beta'] as const;
export type UpdateChannel = (typeof UPDATE_CHANNELS)[number];

export interface UpdateSettings {
  /** The generic feed's base address (where latest-linux.yml, latest.yml, latest-mac.yml lie); '' turns updates off. */
  feedUrl: string;
  /** stable reads latest*.yml; beta reads beta*.yml, which electron-builder also writes for stable releases. */
  channel: UpdateChannel;
}

export const DEFAULT_UPDATE_SETTINGS: UpdateSettings = { feedUrl: '', channel: 'stable' };

// The rules' words come from the catalogue (i18n/locales/en/rules.json, group `updates`): the window
// shows them beside the field, in the agent's language.
const FEED_URL_RULE = text('updates.feedUrlRule');

const isLoopbackHost = (host: string): boolean => {
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  return name === 'localhost' || name === '[::1]' || /^127(?:\.[0-9]{1,3}){3}$/.test(name);
};

/**
 * What is wrong with a feed address, as a rule of the catalogue; undefined when it may be used. Plain http is
 * refused beyond this computer: on Linux the feed's sha512 is all that vouches for an AppImage,
 * and whoever can rewrite an http answer can rewrite the checksum with it.
 */
export function feedUrlProblem(value: string): RuleText | undefined {
  if (value === '') return undefined;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)/i.exec(value);
  if (!scheme || !URL.canParse(value)) return FEED_URL_RULE;
  const protocol = scheme[1]!.toLowerCase();
  if (protocol !== 'https' && protocol !== 'http') return FEED_URL_RULE;
  if (scheme[2]!.includes('@')) return text('updates.feedUrlCredentials');
  const host = new URL(value).host.toLowerCase();
  if (host === '') return FEED_URL_RULE;
  if (protocol === 'http' && !isLoopbackHost(host)) return text('updates.feedUrlPlainHttp');
  if (/[?#]/.test(value)) return text('updates.feedUrlQuery');
  return undefined;
}

const feedUrlSchema = z
  .string({ error: ruleMessage('updates.feedUrlString') })
  .trim()
  .max(2048, ruleMessage('common.tooLongAtMost', { count: 2048 }))
  .refine((value) => feedUrlProblem(value) === undefined, { error: (issue) => encodeText(feedUrlProblem(String(issue.input).trim()) ?? FEED_URL_RULE) });

/** What Settings submits (setUpdateSettings), and what the settings file holds. */
export const updateSettingsSchema = z.strictObject({
  feedUrl: feedUrlSchema,
  channel: z.enum(UPDATE_CHANNELS, { error: ruleMessage('common.oneOf', { values: list(UPDATE_CHANNELS) }) }),
});

/**
 * Where updates stand. `off`: no feed URL. `idle`: nothing to install (`checkedAt` once a check
 * found nothing newer). `ready`: downloaded and checked against its sha512, waiting for "Restart to
 * update" (or the next quit). `unsupported`: this host or installation cannot update itself (the
 * browser host, a run from source, a Linux install that is neither an AppImage nor a deb).
 */
export type UpdateStatus =
  | { kind: 'off' }
  | { kind: 'idle'; checkedAt?: number }
  | { kind: 'checking' }
  | { kind: 'available'; version: string }
  | { kind: 'downloading'; version: string; percent: number }
  | { kind: 'ready'; version: string }
  /** `message` the English, `text` its code and values (the window says it in the agent's language). */
  | { kind: 'error'; message: string; text?: RuleText; at: number }
  | { kind: 'unsupported'; reason: string };

export type UpdateStatusKind = UpdateStatus['kind'];

/** The push's and the snapshot's payload as it must arrive (the renderer parses with it). */
export const updateStatusSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('off') }),
  z.strictObject({ kind: z.literal('idle'), checkedAt: z.number().nonnegative().optional() }),
  z.strictObject({ kind: z.literal('checking') }),
  z.strictObject({ kind: z.literal('available'), version: z.string().min(1).max(256) }),
  z.strictObject({ kind: z.literal('downloading'), version: z.string().min(1).max(256), percent: z.number().min(0).max(100) }),
  z.strictObject({ kind: z.literal('ready'), version: z.string().min(1).max(256) }),
  z.strictObject({ kind: z.literal('error'), message: z.string().max(2000), text: ruleTextSchema.optional(), at: z.number().nonnegative() }),
  z.strictObject({ kind: z.literal('unsupported'), reason: z.string().max(2000) }),
]);
