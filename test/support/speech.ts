import { inject } from 'vitest';

// The local speech server the global setup runs (voice/speech-server: Silero VAD, Whisper, Smart Turn,
// a Piper voice), as `npm start` runs its own and hands its URL to the processes as SPEECH_BASE_URL.

/** Its base URL; '' when it could not start (outside CI only: under CI the setup fails instead). */
export const speechUrl = (): string => inject('speechUrl');

export const hasSpeechServer = (): boolean => speechUrl() !== '';
