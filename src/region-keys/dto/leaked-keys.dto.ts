import { ApiSchema } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsString, Length } from 'class-validator';

import { ApiInteger } from '../../common/swagger';

@ApiSchema({ name: 'LeakedKeysReport' })
export class ReportLeakedKeysDto {
  /**
   * The keys found, each as found (1 to 100 strings of 1 to 256 characters). Any string is taken: one that is no active key of this environment is ignored, and the answer does not say which.
   * @example ['rk_4Fq9ZkT2mW8bLr1sXyC0vN7pHd3eJg6uQo5iAa9fKtB1Isbce']
   */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @Length(1, 256, { each: true })
  keys: string[];
}

@ApiSchema({ name: 'LeakedKeysReceived' })
export class LeakedKeysReceivedDto {
  /**
   * The number of strings received: the same for any report of that many, whatever they are.
   * @example 1
   */
  @ApiInteger()
  received: number;
}
