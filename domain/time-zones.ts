/**
 * The IANA time zone names the API lists for its `timezone` fields: every zone the runtime's ICU lists
 * (in CLDR's spelling, e.g. Asia/Calcutta), the current IANA names of the zones CLDR still spells the old
 * way (Asia/Kolkata), and UTC. Each is one the runtime knows, so every listed name is accepted; the
 * fields also take the other names and letter cases the runtime resolves (aliases such as US/Eastern).
 */
const CURRENT_IANA_NAMES = [
  'UTC',
  'Etc/UTC',
  'Africa/Asmara',
  'America/Argentina/Buenos_Aires',
  'America/Argentina/Catamarca',
  'America/Argentina/Cordoba',
  'America/Argentina/Jujuy',
  'America/Argentina/Mendoza',
  'America/Atikokan',
  'America/Ciudad_Juarez',
  'America/Indiana/Indianapolis',
  'America/Kentucky/Louisville',
  'America/Nuuk',
  'Asia/Ho_Chi_Minh',
  'Asia/Kathmandu',
  'Asia/Kolkata',
  'Asia/Yangon',
  'Atlantic/Faroe',
  'Europe/Kyiv',
  'Pacific/Chuuk',
  'Pacific/Kanton',
  'Pacific/Pohnpei',
];

function known(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export const TIME_ZONE_NAMES: readonly string[] = [...new Set([...Intl.supportedValuesOf('timeZone'), ...CURRENT_IANA_NAMES])]
  .filter(known)
  .sort();
