/**
 * Model names that stand for svc models (`compat.modelAliases`): what other APIs' clients send by default,
 * such as the `claude-opus-…` ids of Claude Code, whose version part changes with each release. A name is
 * exact, or a pattern where `*` matches any text (`claude-*haiku*`). An svc model id is always itself; an
 * exact alias wins over the patterns; among the patterns that match, the one with the most literal
 * characters wins, and of equals the one written first.
 *
 * A request names the svc model from then on: routing, entitlements, the ledger's `model` and replies see
 * only svc ids.
 */
export class ModelAliases {
  readonly #isModel: (id: string) => boolean;
  readonly #exact = new Map<string, string>();
  /** Most specific first. */
  readonly #patterns: { pattern: RegExp; model: string }[] = [];

  constructor(aliases: Record<string, string>, isModel: (id: string) => boolean) {
    this.#isModel = isModel;
    const patterns: { pattern: RegExp; model: string; literal: number; order: number }[] = [];
    for (const [alias, model] of Object.entries(aliases)) {
      if (!alias.includes('*')) {
        this.#exact.set(alias, model);
        continue;
      }
      const source = alias.split('*').map(escapeRegExp).join('.*');
      patterns.push({ pattern: new RegExp(`^${source}$`), model, literal: alias.replaceAll('*', '').length, order: patterns.length });
    }
    patterns.sort((a, b) => b.literal - a.literal || a.order - b.order);
    for (const { pattern, model } of patterns) this.#patterns.push({ pattern, model });
  }

  /** The svc model `id` stands for: itself when it is one (or nothing matches), else its alias's model. */
  resolve(id: string): string {
    if (this.#isModel(id)) return id;
    const exact = this.#exact.get(id);
    if (exact !== undefined) return exact;
    for (const { pattern, model } of this.#patterns) if (pattern.test(id)) return model;
    return id;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
