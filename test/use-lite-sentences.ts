/**
 * The sentences the USE lite reference test compares on (test/use-lite.test.ts): every request and
 * description of the JSON fixtures, those same texts in capitals and wrapped in punctuation, long
 * texts past the model's 128-token limit, Unicode of many scripts and forms, punctuation only, and
 * blank texts. Deterministic, offline.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helpers.js';

export interface ReferenceSentences {
  short: string[];
  long: string[];
  unicode: string[];
  punctuation: string[];
  /** Texts with no characters but white space: dtdr answers them with a zero vector. */
  blank: string[];
}

function fixtureTexts(): string[] {
  const strings: string[] = [];
  const walk = (v: unknown, key = '') => {
    if (typeof v === 'string') {
      if (key !== 'about' && /\s/.test(v.trim())) strings.push(v);
    } else if (Array.isArray(v)) v.forEach((x) => walk(x, key));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  const fixtures = join(ROOT, 'test', 'fixtures');
  for (const f of ['paraphrases.json', 'added-tool-requests.json', 'added-tool-dev-requests.json', 'home-app.json'])
    walk(JSON.parse(readFileSync(join(fixtures, f), 'utf8')));
  for (const line of readFileSync(join(fixtures, 'demo-compositional.jsonl'), 'utf8').split('\n').filter(Boolean))
    walk(JSON.parse(line));
  return [...new Set(strings)];
}

export function referenceSentences(): ReferenceSentences {
  const texts = fixtureTexts();
  const short = [
    ...texts,
    ...texts.filter((_, i) => i % 10 === 0).map((t) => t.toUpperCase()),
    ...texts.filter((_, i) => i % 10 === 5).map((t) => `"${t}?!" (${t.length})`),
    'x',
    'hi',
    'OK',
    '42',
    '3.14159',
    'set an alarm for 7:30',
    'meet at 10:00 tomorrow',
    'http://example.com/path?q=1',
    'user@example.com',
    'C++ vs. C#',
    '  leading and trailing spaces  ',
    'two  spaces   between   words',
    'tab\tseparated\tvalues',
    'line one\nline two',
  ];
  const long = Array.from({ length: 30 }, (_, i) => texts.slice(i * 7, i * 7 + 24).join(' '));
  long.push('word '.repeat(400).trim(), 'a'.repeat(3000), `${'lorem ipsum dolor sit amet, '.repeat(60)}the end`);
  const unicode = [
    'naïve café, résumé and façade',
    'Straße, Größe, Fußgängerübergang',
    'İstanbul’da hava nasıl?',
    'Καλημέρα κόσμε',
    'Привет, как дела?',
    'مرحبا بالعالم',
    'שלום עולם',
    '東京の天気を教えて',
    '明天北京会下雨吗',
    'カレンダーに予定を追加して',
    '오늘 날씨 어때요?',
    'नमस्ते दुनिया',
    'สวัสดีครับ',
    'play some music 🎵🎶',
    'send 👍 to Anna',
    '👨‍👩‍👧‍👦 family photo',
    '🇫🇷 flag and 🇯🇵 flag',
    '👋🏽 wave',
    'ＦＵＬＬ ＷＩＤＴＨ ｔｅｘｔ １２３',
    'the ﬁle and the ﬂight',
    'x² + y² = z²',
    '½ cup of sugar',
    'e\u0301te\u0301 (combining accents)',
    'zero\u200bwidth\u200bspace',
    'non\u00a0breaking\u00a0space',
    'ideographic\u3000space',
    'em — dash – en dash',
    '“curly quotes” and ‘single’ ones',
    '…ellipsis…',
    'replacement \ufffd character',
    'lone surrogate \ud800 here',
    'ℌ𝔢𝔩𝔩𝔬 𝕎𝕠𝕣𝕝𝕕',
    'Ⅻ o’clock',
    '№ 5, ℃ and ㎏',
    'ǅemal and ǈubljana',
    'ﬀ ﬃ ﬄ ligatures',
    '¿Dónde está la estación?',
    'Ça va? Très bien, merci.',
    'Zürich → Genève',
    '𝟙𝟚𝟛 digits',
  ];
  const punctuation = [
    '?',
    '!',
    '.',
    '?!...',
    '...',
    '…',
    ':',
    ':)',
    ':-(',
    '://',
    ':30',
    ':00',
    '): (',
    '---',
    '***',
    '!!!',
    '"',
    "''",
    '()',
    '[]{}',
    '@#$%^&*',
    '。',
    '¿¡',
    '<s>',
    '</s>',
    ',,,',
    '~`|\\',
    '-_-',
    '+=+=',
    '#',
  ];
  const blank = ['', ' ', '   ', '\t', '\n'];
  return { short, long, unicode, punctuation, blank };
}
