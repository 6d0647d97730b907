/** What the page (test/browser-use-lite/main.ts) embeds and retrieves; the test embeds the same sentences in Node. */
export const SENTENCES = [
  'Will it rain in Oslo tomorrow?',
  "What's the weather forecast for Oslo tomorrow?",
  'Email the invoice to Anna',
  'Send Anna the bill by mail',
  'Put lunch with Ana on my calendar for Friday',
  'Schedule a meeting with Ana on Friday at noon',
  'Play some jazz',
  'Put on a jazz playlist',
  'Ünïcödé → “quotes” and punctuation?!',
  '',
];

export const REQUESTS = [
  'Email the quarterly report to Maria',
  'Will I need an umbrella in Oslo tomorrow?',
  'How do I get to the nearest pharmacy?',
  'Remind me to call the dentist tomorrow morning',
];
