import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

import { toIntSetting } from './settings';

export interface IntSettingOptions {
  min?: number;
  max?: number;
  /** Instead of class-validator's own: one message for every check, or one per bound. */
  message?: string | { min?: string; max?: string };
}

/** A whole-number setting (spaces around it allowed) within `min` and `max`. */
export function IntSetting({ min, max, message }: IntSettingOptions = {}): PropertyDecorator {
  const messages = typeof message === 'string' ? { int: message, min: message, max: message } : { ...message };
  const checks = [
    max === undefined ? [] : [Max(max, { message: messages.max })],
    min === undefined ? [] : [Min(min, { message: messages.min })],
    [IsInt({ message: messages.int })],
  ].flat();
  // Applied bottom up, as a stack of these decorators would be, so a value failing several
  // checks gets their messages in the same order.
  return applyDecorators(...checks, Transform(toIntSetting));
}
