/** The event types with their descriptions, as the admin console and the portal list them. */
import { EVENT_TYPE_DESCRIPTIONS, EVENT_TYPES } from "./event-types.ts";

export const EVENT_TYPE_OPTIONS = EVENT_TYPES.map((type) => ({ type, description: EVENT_TYPE_DESCRIPTIONS[type] }));
