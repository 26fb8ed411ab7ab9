// The one rule for phone numbers the API dials or registers (campaign contacts, caller ids, the inventory,
// transfer destinations, the do-not-call list): E.164 in shape, as the document's pattern says, and valid for
// its region, as the description says (libphonenumber); stored normalized. Defined in domain/ because the
// agent configuration, validated by the worker too, uses it.
export { E164_PATTERN, PHONE_NUMBER_RULE, PhoneNumberInput, phoneNumberField, toE164 } from '../../domain/phone-numbers';
