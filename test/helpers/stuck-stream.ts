import type { Executor } from '../../server/metering/executor.ts';
import type { Metered, Turn } from '../../server/metering/turn.ts';

/** An upstream call that hangs until told to finish (`finish`): its instance "dies" with the turn unsettled. */
export class StuckStream implements Executor<{ produced: Metered }, Metered> {
  #finish: () => void = () => undefined;
  readonly done = new Promise<void>((resolve) => (this.#finish = resolve));
  finish(): void {
    this.#finish();
  }
  async execute(turn: Turn, call: { produced: Metered }) {
    turn.deployment = 'scripted';
    turn.output = true;
    await this.done;
    turn.metered = call.produced;
    return call.produced;
  }
  progress(_turn: Turn, call: { produced: Metered }): Metered {
    return call.produced;
  }
}
