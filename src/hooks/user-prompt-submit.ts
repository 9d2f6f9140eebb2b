/**
 * UserPromptSubmit: stores the prompt's redacted text (unless `capture.prompts` is off). Prints nothing.
 * @module
 */
import { recordPrompt } from '../services/index.js';
import { runHook } from './_runtime.js';
import { sessionContext } from './_session.js';
import { UserPromptSubmitInputSchema } from './contract.js';

await runHook('UserPromptSubmit', UserPromptSubmitInputSchema, (context) => {
  const { input } = context;
  recordPrompt(
    context.store(),
    sessionContext(context),
    { text: input.prompt, key: input.prompt_id ?? input.turn_id ?? null },
    { now: context.now, capture: context.settings.config.capture.prompts },
  );
});
