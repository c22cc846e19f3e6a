// Listeners of one kind of a call's news (the media engine's facts, conditions, qualities, notices).
import { createLogger } from '../../shared/log';

const log = createLogger('media');

/** Listeners of one kind of news; one that throws does not keep the news from the others. */
export class Listeners<T extends { localId: string }> {
  private readonly set = new Set<(value: T) => void>();
  constructor(private readonly what: string) {}
  add(listener: (value: T) => void): () => void {
    this.set.add(listener);
    return () => this.set.delete(listener);
  }
  emit(value: T): void {
    for (const listener of this.set) {
      try {
        listener(value);
      } catch (e) {
        log.error(`a ${this.what} listener failed`, { localId: value.localId, error: e });
      }
    }
  }
}
