// Account settings (issue: "gateway base URL ending in the version segment, API key, product path
// segment defaulting to chatapp, relay URL, agent token"). The API key and the agent token are
// secrets: they never reach the renderer, which sees PublicSettings.
import { z } from 'zod';
import { DEFAULT_PRODUCT } from './gateway';
import { term, type TextValue } from './i18n/text';
import { ruleMessage } from './validation';
import type { PublicNetworkSettings } from './ice-servers';
import type { ServiceCaptureSettings } from './service-capture';

const httpUrl = (what: TextValue) =>
  z
    .string({ error: ruleMessage('common.required') })
    .trim()
    .min(1, ruleMessage('common.required'))
    .refine((v) => /^https?:\/\/[^\s/]+/i.test(v) && URL.canParse(v), ruleMessage('settings.httpUrl', { what }));

export const gatewayUrlSchema = httpUrl(term('gatewayBaseUrl')).refine(
  // zod runs every refinement even after one failed: `new URL` would throw on what is not a URL.
  (v) => !URL.canParse(v) || /\/v[0-9]+\/?$/.test(new URL(v).pathname),
  ruleMessage('settings.versionSegment', { example: 'https://gateway.example.com/restapi/v1' }),
);
export const productSegmentSchema = z
  .string()
  .trim()
  .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/i, ruleMessage('settings.productSegment', { product: DEFAULT_PRODUCT }));
const secret = (what: TextValue) =>
  z
    .string()
    .trim()
    .min(8, ruleMessage('settings.secretAtLeast', { what, count: 8 }))
    .max(4096, ruleMessage('settings.secretTooLong', { what }))
    .regex(/^\S+$/, ruleMessage('settings.secretNoSpaces', { what }));
export const countrySchema = z.string().regex(/^[A-Z]{2}$/, ruleMessage('settings.countryCode'));

/** What the settings screen submits. A blank secret keeps the one already stored. */
export const accountSettingsInputSchema = z.strictObject({
  gatewayUrl: gatewayUrlSchema,
  apiKey: z.union([z.literal(''), secret(term('apiKey'))]).optional(),
  productSegment: productSegmentSchema.default(DEFAULT_PRODUCT),
  relayUrl: httpUrl(term('relayUrl')),
  agentToken: z.union([z.literal(''), secret(term('agentToken'))]).optional(),
  defaultCountry: z.union([z.literal(''), countrySchema]).optional(),
});
export type AccountSettingsInput = z.input<typeof accountSettingsInputSchema>;

/** Stored on disk (secrets excluded: they live behind SecretStore). */
export const storedSettingsSchema = z.object({
  gatewayUrl: gatewayUrlSchema,
  productSegment: productSegmentSchema,
  relayUrl: httpUrl(term('relayUrl')),
  defaultCountry: countrySchema.optional(),
});
export type StoredSettings = z.infer<typeof storedSettingsSchema>;

/** A complete account: with it the app talks to a real gateway and relay. */
export interface AccountConfig extends StoredSettings {
  apiKey: string;
  agentToken: string;
}

/** How secrets are kept where they are kept (style.md 8: a visible fallback policy). */
export type SecretStorageKind = 'os-keychain' | 'owner-only-file' | 'memory';

export interface PublicSettings {
  mode: 'sandbox' | 'account';
  gatewayUrl?: string;
  productSegment: string;
  relayUrl?: string;
  defaultCountry?: string;
  hasApiKey: boolean;
  hasAgentToken: boolean;
  secretStorage: SecretStorageKind;
  /** Settings → Network, without the TURN password. */
  network: PublicNetworkSettings;
  /** Settings → the service's recording and transcription (shared/service-capture.ts). */
  serviceCapture: ServiceCaptureSettings;
}

/** The account's part of PublicSettings, as the settings store sees it (the network is kept apart). */
export type AccountPublicSettings = Omit<PublicSettings, 'network' | 'serviceCapture'>;
