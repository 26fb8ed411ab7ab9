import { isValidPhoneNumber, parsePhoneNumberWithError } from 'libphonenumber-js/max';
import { z } from 'zod';

// Phone numbers the service dials or registers: E.164 in shape (the pattern the document declares, so a
// fuzzer can generate from it) and a number its country's numbering plan assigns (libphonenumber's full
// metadata: the area code and the length for that region), stored as libphonenumber formats it in E.164.
// Zod's own `.meta` (not `.openapi`): the worker imports domain schemas without the OpenAPI extension.

/** A plus, a country code not starting with 0, 7 to 15 digits in all. */
export const E164_PATTERN = /^\+[1-9]\d{6,14}$/;

/** The rule as the document states it beside the pattern. */
export const PHONE_NUMBER_RULE =
  'E.164 (a plus, the country code, the number, no spaces), and a valid number of its region by the numbering plan ' +
  '(libphonenumber): a well-shaped number that no region assigns, such as +10000000000, is refused (422)';

/** The number in E.164 when it is a valid number of its region, else null. */
export function toE164(text: string): string | null {
  if (!E164_PATTERN.test(text) || !isValidPhoneNumber(text)) return null;
  return parsePhoneNumberWithError(text).number;
}

/** A phone number to dial or register: E.164, valid for its region, normalized. */
export const PhoneNumberInput = z
  .string()
  .regex(E164_PATTERN, { message: 'must be an E.164 phone number such as +14155550123', abort: true })
  .refine((text) => toE164(text) !== null, 'must be a valid phone number of its region (E.164), such as +14155550123')
  .overwrite((text) => toE164(text) ?? text)
  .meta({ description: PHONE_NUMBER_RULE });

/** The same, with what the field is for ahead of the rule in the document. */
export const phoneNumberField = (what: string) => PhoneNumberInput.meta({ description: `${what}. ${PHONE_NUMBER_RULE}` });
