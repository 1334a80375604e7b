/**
 * `svc models` prints a table a person can read (issue 49 item 4): id, name, kind, class, prices with their
 * currency, context and output limits, columns aligned in both languages (a Chinese character takes two
 * terminal columns), "—" where a limit means nothing for the kind.
 */
import { describe, expect, it } from 'vitest';
import { modelTable } from '../../../server/cli/client-commands.ts';
import { cliLanguage } from '../../../server/cli/messages.ts';

const price = (input: string, output: string) => ({ perTokens: 1_000_000, input: { effective: { amount: input, currency: 'CNY' } }, output: { effective: { amount: output, currency: 'CNY' } } });
const models = [
  { id: 'svc-2.1-fast', name: 'svc 2.1 Fast', kind: 'chat' as const, class: 'fast', contextLength: 32768, maxOutputTokens: 4096, price: price('0.30', '0.60') },
  { id: 'svc-music', name: 'svc Music', kind: 'music' as const, class: 'premium', contextLength: 131072, maxOutputTokens: 8192, price: price('1.00', '2.00') },
  { id: 'svc-new' },
];

/** Columns a line takes in a terminal. */
const width = (line: string) => [...line].reduce((sum, char) => sum + (/[\u2e80-\ua4cf\uff00-\uff60]/u.test(char) ? 2 : 1), 0);

describe('svc models table', () => {
  it('in English: the currency in the price headings, limits for text models only, unknown fields as —', () => {
    const lines = modelTable(models, cliLanguage({ LANG: 'en_US.UTF-8' }).say);
    expect(lines[0]).toMatch(/^ID +NAME +KIND +CLASS +INPUT CNY\/1M +OUTPUT CNY\/1M +CONTEXT +MAX OUTPUT$/);
    expect(lines[1]).toMatch(/^svc-2\.1-fast +svc 2\.1 Fast +chat +fast +0\.30 +0\.60 +32768 +4096$/);
    expect(lines[2]).toMatch(/^svc-music +svc Music +music +premium +1\.00 +2\.00 +— +—$/);
    expect(lines[3]).toMatch(/^svc-new +— +— +— +— +— +— +—$/);
    expect(lines.at(-1)).toBe('Prices in CNY per 1,000,000 tokens, after the current promotion; context and max output in tokens.');
    // Every column starts where its heading does.
    for (const heading of ['KIND', 'CLASS', 'CONTEXT']) {
      const at = lines[0]!.indexOf(heading);
      for (const line of lines.slice(1, 4)) expect([line[at - 1], line[at] === ' '], `${heading} in ${line}`).toEqual([' ', false]);
    }
  });

  it('in Chinese: headings and kinds translated, columns still aligned by terminal width', () => {
    const lines = modelTable(models, cliLanguage({ LANG: 'zh_CN.UTF-8' }).say);
    expect(lines[0]).toMatch(/^ID +名称 +类型 +档位 +输入 CNY\/1M +输出 CNY\/1M +上下文 +最大输出$/);
    expect(lines[1]).toContain(' 对话 ');
    expect(lines[2]).toContain(' 音乐 ');
    const headingStart = width(lines[0]!.slice(0, lines[0]!.indexOf('档位')));
    for (const line of lines.slice(1, 3)) {
      const cell = line.includes(' fast ') ? 'fast' : 'premium';
      expect(width(line.slice(0, line.indexOf(` ${cell} `) + 1))).toBe(headingStart);
    }
    expect(lines.at(-1)).toBe('价格单位为 CNY / 1,000,000 token，已计入当前优惠；上下文和最大输出以 token 计。');
  });
});
