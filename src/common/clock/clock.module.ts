import { Global, Module } from '@nestjs/common';

import { Clock } from './clock';

/** One Clock for the whole application (server or operator CLI). */
@Global()
@Module({ providers: [Clock], exports: [Clock] })
export class ClockModule {}
