import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../server/config/config.ts';
import { ModelAliases } from '../../../server/modules/model/model.aliases.ts';

const models = new Set(['svc-2.1', 'svc-2.1-fast', 'svc-2.1-pro', 'claude-special']);
const isModel = (id: string) => models.has(id);

describe('compat.modelAliases', () => {
  it('an svc model is itself; an exact alias beats patterns; the pattern with the most literal characters wins', () => {
    const aliases = new ModelAliases({ 'claude-*': 'svc-2.1', 'claude-*haiku*': 'svc-2.1-fast', 'claude-3-5-haiku-latest': 'svc-2.1-pro', 'claude-special': 'svc-2.1-fast' }, isModel);
    expect(aliases.resolve('svc-2.1-pro')).toBe('svc-2.1-pro');
    expect(aliases.resolve('claude-special')).toBe('claude-special');
    expect(aliases.resolve('claude-3-5-haiku-latest')).toBe('svc-2.1-pro');
    expect(aliases.resolve('claude-haiku-4-5-20251001')).toBe('svc-2.1-fast');
    expect(aliases.resolve('claude-fable-9')).toBe('svc-2.1');
    expect(aliases.resolve('gpt-4o')).toBe('gpt-4o');
  });

  it('patterns match whole names, and their dots and other characters literally', () => {
    const aliases = new ModelAliases({ 'gpt-4.1*': 'svc-2.1', 'a*b': 'svc-2.1-fast' }, isModel);
    expect(aliases.resolve('gpt-4.1-mini')).toBe('svc-2.1');
    expect(aliases.resolve('gpt-4x1')).toBe('gpt-4x1');
    expect(aliases.resolve('a-middle-b')).toBe('svc-2.1-fast');
    expect(aliases.resolve('xa-b')).toBe('xa-b');
  });

  it('equal patterns: the one written first wins', () => {
    expect(new ModelAliases({ 'x-*': 'svc-2.1', '*-y': 'svc-2.1-fast' }, isModel).resolve('x-y')).toBe('svc-2.1');
    expect(new ModelAliases({ '*-y': 'svc-2.1-fast', 'x-*': 'svc-2.1' }, isModel).resolve('x-y')).toBe('svc-2.1-fast');
  });

  it("defaults to Claude Code's model families, less those whose model is not configured", () => {
    expect(parseConfig({}).compat.modelAliases).toEqual({ 'claude-*opus*': 'svc-2.1-pro', 'claude-*sonnet*': 'svc-2.1', 'claude-*haiku*': 'svc-2.1-fast', 'claude-*': 'svc-2.1' });
    const onlyFast = parseConfig({ models: { 'svc-2.1-fast': { tier: 'fast', inputPrice: 0.1, outputPrice: 0.2 } }, plans: undefined });
    expect(onlyFast.compat.modelAliases).toEqual({ 'claude-*haiku*': 'svc-2.1-fast' });
  });

  it('refuses an alias to an unknown model, or one that hides an svc model, naming the key', () => {
    expect(() => parseConfig({ compat: { modelAliases: { 'gpt-4o': 'gpt-5' } } })).toThrow('invalid config at compat.modelAliases.gpt-4o: unknown model gpt-5');
    expect(() => parseConfig({ compat: { modelAliases: { 'svc-2.1': 'svc-2.1-fast' } } })).toThrow('invalid config at compat.modelAliases.svc-2.1: svc-2.1 is an svc model already');
    expect(() => parseConfig({ compat: { modelAliases: { 'bad name': 'svc-2.1' } } })).toThrow(/compat\.modelAliases/);
  });
});
