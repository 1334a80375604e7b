/**
 * Enterprise events across instances, through the GraphQL pub/sub (Redis when configured, in process
 * otherwise): "an application changed" (`enterpriseApplicationChanged`) and "an organisation's connecting
 * IPs changed" (`organisationConnectionsChanged`). Messages carry ids only; subscribers read the fresh
 * state themselves, so what they see is what the database says.
 */
import { Repeater, SlidingBuffer, type PubSub } from 'graphql-yoga';

export interface ApplicationChanged {
  applicationId: string;
  /** The applicant, so an applicant's subscription can skip others' applications without a query. */
  accountId: string;
}

export interface ConnectionsChanged {
  organisationIds: string[];
}

export type EnterpriseTopics = Record<string, [ApplicationChanged] | [ConnectionsChanged]>;

export class EnterpriseEvents {
  readonly #pubsub: PubSub<EnterpriseTopics>;
  readonly #applicationTopic: string;
  readonly #connectionsTopic: string;

  constructor(pubsub: PubSub<EnterpriseTopics>, keyPrefix: string) {
    this.#pubsub = pubsub;
    this.#applicationTopic = `${keyPrefix}enterprise-application-changed`;
    this.#connectionsTopic = `${keyPrefix}organisation-connections-changed`;
  }

  applicationChanged(event: ApplicationChanged): void {
    this.#pubsub.publish(this.#applicationTopic, event);
  }

  connectionsChanged(organisationIds: string[]): void {
    if (organisationIds.length > 0) this.#pubsub.publish(this.#connectionsTopic, { organisationIds });
  }

  /** Every application change on any instance, filtered by `keep`. */
  applications(keep: (event: ApplicationChanged) => boolean): AsyncIterableIterator<ApplicationChanged> {
    const source = this.#pubsub.subscribe(this.#applicationTopic) as AsyncIterable<ApplicationChanged>;
    return new Repeater<ApplicationChanged>(async (push, stop) => {
      const iterator = source[Symbol.asyncIterator]();
      void stop.then(() => iterator.return?.());
      for (;;) {
        const next = await Promise.race([iterator.next(), stop.then(() => ({ done: true as const, value: undefined }))]);
        if (next.done) break;
        if (keep(next.value)) await push(next.value);
      }
      stop();
    });
  }

  /** Yields at once, then whenever the organisation's connections changed on any instance (bursts fold into one). */
  connections(organisationId: string): AsyncIterableIterator<true> {
    const source = this.#pubsub.subscribe(this.#connectionsTopic) as AsyncIterable<ConnectionsChanged>;
    return new Repeater<true>(async (push, stop) => {
      const iterator = source[Symbol.asyncIterator]();
      void stop.then(() => iterator.return?.());
      void push(true);
      for (;;) {
        const next = await Promise.race([iterator.next(), stop.then(() => ({ done: true as const, value: undefined }))]);
        if (next.done) break;
        if (next.value.organisationIds?.includes(organisationId)) void push(true);
      }
      stop();
    }, new SlidingBuffer(1));
  }
}
