/**
 * dtdr's own demo world: the tools of an on-device assistant (tools.ts), the scenarios they serve
 * and a seeded generator of varied demonstrations. Written for this project; used by `npm start`,
 * the tests and the examples.
 */
import { planFromRecord } from '../core/plans/plan.js';
import { seededRandom } from '../core/base/random.js';
import type { Dataset, Plan } from '../core/base/types.js';
import { DEMO_TOOLS } from './tools.js';

export { DEMO_TOOLS };

type Slot = 'person' | 'topic' | 'time' | 'day' | 'place' | 'music' | 'file' | 'language' | 'money' | 'thing';

const SLOTS: Record<Slot, string[]> = {
  person: [
    'Anna',
    'Ben',
    'my mother',
    'my boss',
    'Carlos',
    'Priya',
    'my brother',
    'Sarah',
    'the landlord',
    'Tom',
    'my sister',
    'Dr. Lee',
  ],
  topic: [
    'the budget',
    'the trip',
    'dinner plans',
    'the contract',
    'the school meeting',
    'the birthday party',
    'the project deadline',
    'the rent',
  ],
  time: ['7 am', 'six thirty', '8:15', 'noon', 'half past five', '9 pm'],
  day: ['tomorrow', 'on Friday', 'next Monday', 'this weekend', 'tonight', 'on Tuesday'],
  place: [
    'the airport',
    'a pharmacy',
    'the nearest gas station',
    'the train station',
    'a coffee shop',
    'the museum',
    'a supermarket',
    'the hospital',
  ],
  music: ['some jazz', 'relaxing music', 'the new Adele album', 'my running playlist', 'classical piano', 'rock songs'],
  file: [
    'the invoice',
    'my resume',
    'the lease agreement',
    'the slides for the meeting',
    'the tax return',
    'the project report',
  ],
  language: ['Spanish', 'French', 'German', 'Japanese', 'Italian'],
  money: ['50 dollars', '200 euros', '1000 yen', '30 pounds'],
  thing: [
    'buy milk',
    'call the bank',
    'water the plants',
    'pay the electricity bill',
    'pick up the kids',
    'take my medicine',
  ],
};

interface Scenario {
  templates: string[];
  /** Tool calls in execution order. */
  nodes: string[];
  /** Data dependencies as [source, target] node indices; default: a chain. */
  links?: [number, number][];
}

const SCENARIOS: Scenario[] = [
  {
    nodes: ['contacts_search', 'email_send'],
    templates: [
      'Email {person} about {topic}',
      'Send {person} a mail about {topic}',
      'Write an email to {person} regarding {topic}',
      'Drop {person} a quick email on {topic}',
    ],
  },
  {
    nodes: ['contacts_search', 'sms_send'],
    templates: [
      'Text {person} that I am running late',
      'Send {person} a message saying I will be there soon',
      'Message {person} about {topic}',
      'Tell {person} by text that dinner is ready',
    ],
  },
  {
    nodes: ['contacts_search', 'phone_call'],
    templates: ['Call {person}', 'Phone {person} now', 'Ring {person} please', 'Give {person} a call'],
  },
  {
    nodes: ['contacts_search', 'calendar_create_event', 'email_send'],
    templates: [
      'Set up a meeting with {person} {day} and send them an invite',
      'Schedule a call with {person} {day} about {topic} and email the invitation',
      'Book time with {person} {day} and let them know by email',
    ],
  },
  {
    nodes: ['reminders_create'],
    templates: [
      'Remind me to {thing} {day}',
      'Set a reminder to {thing} at {time}',
      "Don't let me forget to {thing} {day}",
    ],
  },
  {
    nodes: ['alarm_set'],
    templates: ['Wake me up at {time}', 'Set an alarm for {time} {day}', 'Alarm at {time} every weekday'],
  },
  {
    nodes: ['timer_set'],
    templates: ['Set a timer for ten minutes', 'Start a 25 minute countdown', 'Timer for the pasta, eight minutes'],
  },
  {
    nodes: ['maps_search_place', 'maps_directions'],
    templates: [
      'Take me to {place}',
      'How do I get to {place}',
      'Navigate to {place}',
      'Directions to {place} by transit',
    ],
  },
  {
    nodes: ['contacts_search', 'maps_directions'],
    templates: [
      "Drive me to {person}'s house",
      "How long to get to {person}'s place",
      'Navigate to where {person} lives',
    ],
  },
  {
    nodes: ['location_current', 'contacts_search', 'sms_send'],
    links: [
      [0, 2],
      [1, 2],
    ],
    templates: [
      'Share my location with {person}',
      'Send {person} where I am right now',
      'Text my current position to {person}',
    ],
  },
  {
    nodes: ['weather_forecast'],
    templates: ['What is the weather {day}', 'Will it rain {day}', 'Forecast for Berlin {day}'],
  },
  {
    nodes: ['calendar_list_events', 'weather_forecast'],
    templates: [
      'Check the weather where my next meeting is',
      'Will it rain during my events {day}',
      'What should I wear to my appointments {day}',
    ],
  },
  {
    nodes: ['music_search', 'music_play'],
    templates: ['Play {music}', 'Put on {music}', 'I want to listen to {music}', 'Start {music}'],
  },
  {
    nodes: ['notes_create'],
    templates: [
      'Take a note: {topic} ideas',
      'Write down that I need to {thing}',
      'Note that the wifi password changed',
    ],
  },
  {
    nodes: ['notes_search', 'contacts_search', 'email_send'],
    links: [
      [0, 2],
      [1, 2],
    ],
    templates: [
      'Email my notes on {topic} to {person}',
      'Send {person} the note about {topic}',
      'Mail {person} what I wrote about {topic}',
    ],
  },
  {
    nodes: ['files_search', 'contacts_search', 'email_send'],
    links: [
      [0, 2],
      [1, 2],
    ],
    templates: ['Email {file} to {person}', 'Send {person} {file} as an attachment', 'Mail {file} over to {person}'],
  },
  { nodes: ['files_search', 'files_open'], templates: ['Open {file}', 'Show me {file}', 'Find and open {file}'] },
  {
    nodes: ['translate_text', 'contacts_search', 'sms_send'],
    links: [
      [0, 2],
      [1, 2],
    ],
    templates: [
      'Translate "see you soon" into {language} and text it to {person}',
      'Send {person} "happy birthday" in {language}',
    ],
  },
  {
    nodes: ['translate_text'],
    templates: ['How do you say good morning in {language}', 'Translate "where is the station" into {language}'],
  },
  {
    nodes: ['calendar_list_events'],
    templates: ['What is on my calendar {day}', 'Do I have meetings {day}', 'Show my schedule {day}'],
  },
  {
    nodes: ['calendar_list_events', 'calendar_update_event', 'email_send'],
    templates: [
      'Move my meeting with {person} to {day} and tell them',
      'Reschedule {topic} to {day} and email everyone',
      'Push my appointment {day} by an hour and let the attendees know',
    ],
  },
  {
    nodes: ['maps_search_place', 'restaurant_book', 'calendar_create_event'],
    templates: [
      'Book a table for four at an Italian place {day} and add it to my calendar',
      'Reserve dinner for two near {place} {day} and put it in my calendar',
      'Find a sushi restaurant and book it for {day}',
    ],
  },
  {
    nodes: ['photos_search', 'contacts_search', 'sms_send'],
    links: [
      [0, 2],
      [1, 2],
    ],
    templates: [
      'Send {person} the photos from the beach',
      'Share the pictures of the party with {person}',
      'Text {person} my photos from the trip',
    ],
  },
  { nodes: ['email_read'], templates: ['Read my unread emails', 'Any new mail from {person}', 'What is in my inbox'] },
  {
    nodes: ['email_read', 'email_send'],
    templates: [
      'Reply to the last email from {person}',
      "Answer {person}'s mail saying yes",
      'Respond to my latest email about {topic}',
    ],
  },
  {
    nodes: ['email_read', 'notes_create'],
    templates: [
      "Save the address in {person}'s email to my notes",
      'Make a note of what {person} emailed about {topic}',
    ],
  },
  {
    nodes: ['currency_convert'],
    templates: ['Convert {money} to euros', 'How much is {money} in dollars', 'What are {money} worth in pounds'],
  },
  {
    nodes: ['calendar_list_events', 'reminders_create'],
    templates: ['Remind me an hour before my next meeting', 'Set reminders for my appointments {day}'],
  },
  {
    nodes: ['web_search'],
    templates: ['Search the web for {topic}', 'Look up opening hours of {place}', 'Google the best way to {thing}'],
  },
  {
    nodes: ['phone_call_log', 'phone_call'],
    templates: ['Call back the last missed call', 'Return my missed call', 'Ring back whoever called me last'],
  },
  {
    nodes: ['phone_call_log', 'contacts_search', 'sms_send'],
    links: [
      [0, 2],
      [1, 2],
    ],
    templates: ['Text {person} that I missed their call', 'Tell {person} by message I will call back later'],
  },
  {
    nodes: ['contacts_search', 'email_send', 'contacts_search', 'email_send'],
    templates: [
      'Email {person} and {person2} about {topic}',
      'Send a mail about {topic} to both {person} and {person2}',
    ],
  },
];

/** Fills a template's slots from the seeded source. */
function fill(template: string, random: () => number): string {
  const pick = (slot: Slot) => SLOTS[slot][Math.floor(random() * SLOTS[slot].length)];
  return template.replace(/\{(\w+?)2?\}/g, (_, slot: string) => pick(slot as Slot));
}

/** Generates `count` varied demonstrations; the same seed gives the same plans. */
export function generateDemoPlans(count = 3000, seed = 0): Plan[] {
  const random = seededRandom(seed + 101);
  return Array.from({ length: count }, (_, i) => {
    const scenario = SCENARIOS[Math.floor(random() * SCENARIOS.length)];
    const template = scenario.templates[Math.floor(random() * scenario.templates.length)];
    const links = scenario.links ?? scenario.nodes.slice(1).map((_, k) => [k, k + 1] as [number, number]);
    return planFromRecord({
      id: `demo-${i}`,
      user_request: fill(template, random),
      task_nodes: scenario.nodes.map((task) => ({ task })),
      task_links: links.map(([s, t]) => ({ source: scenario.nodes[s], target: scenario.nodes[t] })),
    });
  });
}

/** The demo tool set with `count` generated demonstrations (seeded), as `npm start` and the quickstart use it. */
export function demoDataset(count = 3000, seed = 0): Dataset {
  return { name: 'dtdr-demo', tools: DEMO_TOOLS, plans: generateDemoPlans(count, seed) };
}

/**
 * The requests `npm start` walks, each with the plan it needs. None is a template of the generator
 * verbatim; the last two combine familiar steps in a sequence no generated demonstration has.
 */
export const DEMO_SHOWCASE: readonly { query: string; plan: readonly string[] }[] = [
  {
    query: 'Find a vegan restaurant near me and text the address to Sam',
    plan: ['maps_search_place', 'contacts_search', 'sms_send'],
  },
  { query: 'Could you email the quarterly report to Maria?', plan: ['files_search', 'contacts_search', 'email_send'] },
  { query: 'Find me a pharmacy that is open and guide me there', plan: ['maps_search_place', 'maps_directions'] },
  { query: 'Let my dad know where I am by text', plan: ['location_current', 'contacts_search', 'sms_send'] },
  {
    query: 'Translate thank you into Japanese and email it to my brother',
    plan: ['translate_text', 'contacts_search', 'email_send'],
  },
  { query: 'Call the nearest pharmacy', plan: ['maps_search_place', 'phone_call'] },
];

/** The showcase's requests alone. */
export const DEMO_QUERIES = DEMO_SHOWCASE.map((s) => s.query);
