/**
 * The demo's tools: 27 tools of an on-device assistant, with real dependencies between them (look
 * a contact up before mailing them, find a place before routing to it). Written for this project.
 */
import type { JsonSchema, ToolSpec } from '../core/base/types.js';

const str = (description: string): JsonSchema => ({ type: 'string', description });
const obj = (properties: Record<string, JsonSchema>, required: string[]): JsonSchema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

/** The demo tool set: 27 tools of an on-device assistant (contacts, email, maps, calendar, …). */
export const DEMO_TOOLS: ToolSpec[] = [
  {
    name: 'contacts_search',
    description: 'Find a contact by name and return their phone number, email address and home address.',
    parameters: obj({ name: str('Name or nickname of the person') }, ['name']),
  },
  {
    name: 'email_send',
    description: 'Send an email to an address, optionally with attachments.',
    parameters: obj(
      {
        to: str('Recipient email address'),
        subject: str('Subject line'),
        body: str('Message text'),
        attachments: { type: 'array', items: { type: 'string' }, description: 'File paths to attach' },
      },
      ['to', 'subject', 'body'],
    ),
  },
  {
    name: 'email_read',
    description: 'List recent emails in the inbox, newest first, optionally only unread ones or from one sender.',
    parameters: obj(
      { unread_only: { type: 'boolean', description: 'Only unread messages' }, sender: str('Filter by sender') },
      [],
    ),
  },
  {
    name: 'sms_send',
    description: 'Send a text message to a phone number.',
    parameters: obj({ phone: str('Recipient phone number'), text: str('Message text') }, ['phone', 'text']),
  },
  {
    name: 'phone_call',
    description: 'Start a phone call to a number.',
    parameters: obj({ phone: str('Number to call') }, ['phone']),
  },
  {
    name: 'phone_call_log',
    description: 'List recent incoming, outgoing and missed calls.',
    parameters: obj({ missed_only: { type: 'boolean', description: 'Only missed calls' } }, []),
  },
  {
    name: 'calendar_create_event',
    description: 'Create a calendar event with a title, start time, duration and optional attendees.',
    parameters: obj(
      {
        title: str('Event title'),
        start: str('Start date and time, ISO 8601'),
        duration_minutes: { type: 'integer', minimum: 1, description: 'Length in minutes' },
        attendees: { type: 'array', items: { type: 'string' }, description: 'Attendee email addresses' },
      },
      ['title', 'start'],
    ),
  },
  {
    name: 'calendar_list_events',
    description: 'List calendar events in a date range.',
    parameters: obj({ from: str('Start of range, ISO 8601 date'), to: str('End of range, ISO 8601 date') }, ['from']),
  },
  {
    name: 'calendar_update_event',
    description: 'Move or change an existing calendar event.',
    parameters: obj(
      { event_id: str('Id from calendar_list_events'), start: str('New start, ISO 8601'), title: str('New title') },
      ['event_id'],
    ),
  },
  {
    name: 'reminders_create',
    description: 'Create a reminder that notifies at a given time.',
    parameters: obj({ text: str('What to be reminded of'), at: str('When, ISO 8601') }, ['text', 'at']),
  },
  {
    name: 'alarm_set',
    description: 'Set a wake-up alarm at a time of day, optionally repeating.',
    parameters: obj(
      {
        time: str('Time of day, HH:MM'),
        repeat: { type: 'string', enum: ['once', 'daily', 'weekdays'], description: 'Repetition' },
      },
      ['time'],
    ),
  },
  {
    name: 'timer_set',
    description: 'Start a countdown timer.',
    parameters: obj({ minutes: { type: 'number', minimum: 0, description: 'Duration in minutes' } }, ['minutes']),
  },
  {
    name: 'notes_create',
    description: 'Write a new note.',
    parameters: obj({ title: str('Note title'), text: str('Note body') }, ['text']),
  },
  {
    name: 'notes_search',
    description: 'Search notes by words in their title or text.',
    parameters: obj({ query: str('Words to look for') }, ['query']),
  },
  {
    name: 'maps_search_place',
    description: 'Find a place, shop or business by name or category near a location and return its address.',
    parameters: obj(
      { query: str('What to look for'), near: str('Around which address; default the current location') },
      ['query'],
    ),
  },
  {
    name: 'maps_directions',
    description: 'Get directions and travel time to an address.',
    parameters: obj(
      {
        destination: str('Destination address'),
        mode: { type: 'string', enum: ['driving', 'walking', 'transit', 'cycling'], description: 'Travel mode' },
      },
      ['destination'],
    ),
  },
  {
    name: 'location_current',
    description: "Get the device's current location as an address.",
    parameters: obj({}, []),
  },
  {
    name: 'weather_forecast',
    description: 'Get the weather forecast for a place and day.',
    parameters: obj({ place: str('City or address'), date: str('Day, ISO 8601 date') }, ['place']),
  },
  {
    name: 'music_search',
    description: 'Search the music library for songs, albums, artists or playlists.',
    parameters: obj({ query: str('Song, artist, album or mood') }, ['query']),
  },
  {
    name: 'music_play',
    description: 'Play a song, album or playlist by its id.',
    parameters: obj({ item_id: str('Id from music_search') }, ['item_id']),
  },
  {
    name: 'files_search',
    description: 'Search documents and downloads on the device by name or content.',
    parameters: obj({ query: str('Words in the file name or content') }, ['query']),
  },
  {
    name: 'files_open',
    description: 'Open a file in its default app.',
    parameters: obj({ path: str('File path from files_search') }, ['path']),
  },
  {
    name: 'photos_search',
    description: 'Search the photo gallery by place, date or who is in the picture.',
    parameters: obj({ query: str('Place, date or person') }, ['query']),
  },
  {
    name: 'translate_text',
    description: 'Translate text into another language.',
    parameters: obj({ text: str('Text to translate'), target_language: str('Language to translate into') }, [
      'text',
      'target_language',
    ]),
  },
  {
    name: 'currency_convert',
    description: "Convert an amount of money between currencies at today's rate.",
    parameters: obj(
      {
        amount: { type: 'number', description: 'Amount' },
        from: str('Currency code, e.g. USD'),
        to: str('Currency code, e.g. EUR'),
      },
      ['amount', 'from', 'to'],
    ),
  },
  {
    name: 'restaurant_book',
    description: 'Book a table at a restaurant for a number of people at a time.',
    parameters: obj(
      {
        restaurant: str('Restaurant name or address'),
        people: { type: 'integer', minimum: 1, description: 'Party size' },
        time: str('Date and time, ISO 8601'),
      },
      ['restaurant', 'people', 'time'],
    ),
  },
  {
    name: 'web_search',
    description: 'Search the web and return the top results.',
    parameters: obj({ query: str('Search terms') }, ['query']),
  },
];
