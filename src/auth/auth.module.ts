import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { AppConfig } from '../config/app-config';
import { UsersModule } from '../users/users.module';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { BasicAuthCache } from './basic-auth-cache';
import { JwtSettings } from './jwt-settings';
import { RateLimitModule } from '../common/rate-limit/rate-limit.module';
import { BasicStrategy } from './strategies/basic.strategy';
import { JwtStrategy } from './strategies/jwt.strategy';
import { TokenService } from './token.service';

/**
 * Signing in (token issue, Basic, Bearer) and GET /me. Other modules protect their routes
 * with @UserAuth() and read the caller with @CurrentUser().
 */
@Module({
  // JwtModule without defaults: the secret and algorithm come from JwtSettings at each call.
  imports: [UsersModule, PassportModule, JwtModule.register({}), RateLimitModule],
  controllers: [AuthController],
  providers: [
    { provide: JwtSettings, inject: [AppConfig], useFactory: JwtSettings.fromConfig },
    AuthService,
    TokenService,
    BasicAuthCache,
    BasicStrategy,
    JwtStrategy,
  ],
})
export class AuthModule {}
