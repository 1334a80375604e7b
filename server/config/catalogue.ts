/**
 * The embedded default catalogue: the spec's 11 product models (§2.1), the launch promotion and the
 * Free / Pro / Max plans (DESIGN §4). `svc.config.example.yaml` writes the same values out; a test keeps
 * the two in step.
 */
export const defaultModels = {
  auto: {
    name: 'Auto',
    tier: 'fast',
    inputPrice: 0.14,
    outputPrice: 0.28,
    intendedUse: 'High volume and tool use; routes to svc-2.1-fast',
    routesTo: 'svc-2.1-fast',
  },
  'svc-2.1-fast': { name: 'svc 2.1 Fast', tier: 'fast', inputPrice: 0.14, outputPrice: 0.28, intendedUse: 'High volume and tool use' },
  'svc-ocr': { name: 'svc OCR', tier: 'fast', inputPrice: 0.14, outputPrice: 0.28, intendedUse: 'Text recognition in images' },
  'svc-tts': {
    name: 'svc TTS',
    tier: 'fast',
    inputPrice: 0.14,
    outputPrice: 0.28,
    intendedUse: 'Broadcast speech with a preset voice, through the audio endpoint',
  },
  svc: { name: 'svc', tier: 'premium', inputPrice: 0.435, outputPrice: 0.87, intendedUse: 'General flagship model' },
  'svc-2.1': { name: 'svc 2.1', tier: 'premium', inputPrice: 0.435, outputPrice: 0.87, intendedUse: 'Writing and coding' },
  'svc-2.1-pro': { name: 'svc 2.1 Pro', tier: 'premium', inputPrice: 0.435, outputPrice: 0.87, intendedUse: 'Hard problems, longer reasoning' },
  'svc-2.1-rev': { name: 'svc 2.1 Rev', tier: 'premium', inputPrice: 0.435, outputPrice: 0.87, intendedUse: 'Review and revision of drafts and code' },
  'svc-2.1-search': {
    name: 'svc 2.1 Search',
    tier: 'premium',
    inputPrice: 0.435,
    outputPrice: 0.87,
    intendedUse: 'Search; equivalent to the hosted web_search tool',
  },
  'svc-img': {
    name: 'svc Image',
    tier: 'premium',
    inputPrice: 0.435,
    outputPrice: 0.87,
    intendedUse: 'Image generation through chat completions; replies hold Markdown image links',
  },
  'svc-music': {
    name: 'svc Music',
    tier: 'premium',
    inputPrice: 0.435,
    outputPrice: 0.87,
    intendedUse: 'Songs through the audio endpoint; default length 30 seconds',
  },
} as const;

const proPools = {
  fast: { day: 3, week: 15, month: 45 },
  premium: { day: 1, week: 5, month: 15 },
};

export const defaultPlans = {
  free: {
    name: 'Free',
    description: 'A daily allowance of fast and premium usage, shared by web chat, the agent, the CLI and the API.',
    requestsPerMinute: 60,
    pools: {
      fast: { day: 0.2, week: 1, month: 4 },
      premium: { day: 0.05, week: 0.25, month: 1 },
    },
    packages: [{ id: 'free', name: 'Free', price: 0, multiplier: 1 }],
  },
  pro: {
    name: 'Pro',
    description: 'Paid membership: larger daily, weekly and monthly pools for every model.',
    requestsPerMinute: 600,
    pools: proPools,
    packages: [{ id: 'pro', name: 'Pro', price: 9, prices: { USD: 9, CNY: 65 }, multiplier: 1 }],
  },
  max: {
    name: 'Max',
    description: 'For heavy use: five or twenty times the Pro pools.',
    requestsPerMinute: 1200,
    pools: proPools,
    packages: [
      { id: 'max_x5', name: 'Max x5', price: 19, prices: { USD: 19, CNY: 138 }, multiplier: 5 },
      { id: 'max_x20', name: 'Max x20', price: 39, prices: { USD: 39, CNY: 283 }, multiplier: 20 },
    ],
  },
  /** Organisations (DESIGN §8.1): not sold at checkout nor listed on the pricing page; staff assign it. */
  enterprise: {
    name: 'Enterprise',
    description: "An organisation's pools, shared by its svc_ent_ keys; staff may move an organisation to another package.",
    requestsPerMinute: 3000,
    pools: proPools,
    packages: [{ id: 'enterprise', name: 'Enterprise', price: 0, multiplier: 50 }],
  },
};

/**
 * Model names other APIs' clients send by default, as svc models (`compat.modelAliases`). Claude Code asks
 * for `claude-<family>-<version>` ids that change with each release, so the families are patterns; the
 * most specific pattern wins (exact names first, then the one with the most literal characters). The
 * embeddings classes of LangChain and LlamaIndex ask for `text-embedding-ada-002` unless told otherwise:
 * that is the embedding model `svc-embed`, when the operator configures one by that id (none by default).
 */
export const defaultModelAliases = {
  'claude-*opus*': 'svc-2.1-pro',
  'claude-*sonnet*': 'svc-2.1',
  'claude-*haiku*': 'svc-2.1-fast',
  'claude-*': 'svc-2.1',
  'text-embedding-*': 'svc-embed',
};
