// The Graph error envelope the gateway passes through from the Cloud API (protocol.md "Call control").
import { randomBytes } from 'node:crypto';
import type { GraphError } from '../shared/gateway';

/** A refused gateway request: its HTTP status and what goes into the envelope. */
export interface GraphFailure {
  status: number;
  code: number;
  message: string;
  details?: string;
  type?: string;
}

export function graphErrorBody(failure: GraphFailure): GraphError {
  return {
    error: {
      message: failure.message,
      type: failure.type ?? 'OAuthException',
      code: failure.code,
      ...(failure.details === undefined ? {} : { error_data: { details: failure.details } }),
      fbtrace_id: randomBytes(8).toString('base64url'),
    },
  };
}

/** Error 100, invalid parameter: the message names the field and the rule, like the real service's "(#100) …". */
export const invalidParameter = (field: string, rule: string, details = `${field}: ${rule}`): GraphFailure => ({
  status: 400,
  code: 100,
  message: `(#100) ${field}: ${rule}`,
  details,
});
