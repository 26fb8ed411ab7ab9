// Feedback: what a submission may say. Global (not organization-scoped); read only by operators.

export const FEEDBACK_CATEGORIES = ['bug', 'idea', 'question', 'praise', 'other'] as const;
export type FeedbackCategory = (typeof FEEDBACK_CATEGORIES)[number];

export const FEEDBACK_MESSAGE_MAX = 5000;
/** The serialized `context` object (page, app version, browser...) may take this many bytes. */
export const FEEDBACK_CONTEXT_MAX_BYTES = 8192;

/** Where operators stand with a piece of feedback; any status may follow any other. */
export const FEEDBACK_STATUSES = ['new', 'seen', 'done'] as const;
export type FeedbackStatus = (typeof FEEDBACK_STATUSES)[number];
