import { describe, expect, it } from 'vitest';
import { CallbackHints } from '../../../relay/callback-requests';

describe('the customers an instance knows to have a callback request', () => {
  it('asks for everyone until the list was read; then only for the customers it knows, by number or user id', () => {
    const hints = new CallbackHints();
    expect(hints.mayHave({ number: '447700900123' })).toBe(true);
    hints.loaded([{ number: '447700900123' }, { userId: 'US.1' }]);
    expect(hints.mayHave({ number: '447700900123' })).toBe(true);
    expect(hints.mayHave({ number: '12025550100', userId: 'US.1' })).toBe(true);
    expect(hints.mayHave({ number: '12025550100' })).toBe(false);
    hints.note({ number: '12025550100' });
    expect(hints.mayHave({ number: '12025550100' })).toBe(true);
    hints.forget({ number: '12025550100' });
    expect(hints.mayHave({ number: '12025550100' })).toBe(false);
  });

  it('past what the list can hold, it tells nothing: everyone may have one', () => {
    const hints = new CallbackHints();
    hints.loaded([]);
    for (let i = 0; i <= 20_000; i += 1) hints.note({ number: String(10_000_000 + i) });
    expect(hints.mayHave({ number: '1' })).toBe(true);
  });
});
