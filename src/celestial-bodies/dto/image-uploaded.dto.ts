import { ApiProperty, ApiSchema } from '@nestjs/swagger';

import { IMAGE_TYPES } from '../image-upload';

/** The Galaxy `ImageUploadedMessage`. */
@ApiSchema({ name: 'ImageUploadedMessage' })
export class ImageUploadedDto {
  @ApiProperty({ example: 'Image uploaded successfully' })
  message: string;

  @ApiProperty({ description: 'Where the image can be fetched (GET, public).', example: '/planets/1/image' })
  imageUrl: string;

  @ApiProperty({ type: 'string', format: 'date-time', example: '2024-01-15T14:30:00.000Z' })
  uploadedAt: string;

  @ApiProperty({ type: 'integer', description: 'Size of the image in bytes', example: 1048576 })
  fileSize: number;

  @ApiProperty({ description: "The type detected from the image's bytes", enum: IMAGE_TYPES, example: 'image/jpeg' })
  mimeType: string;
}
