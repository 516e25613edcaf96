import { Global, Injectable, Module, OnModuleDestroy } from '@nestjs/common';

/**
 * Whether the process has begun to shut down. Readiness turns 503 from that moment, while
 * liveness stays 200: a load balancer stops sending new requests, and nothing restarts a
 * process that is only finishing its work.
 */
@Injectable()
export class ShutdownState implements OnModuleDestroy {
  private begun = false;

  get isShuttingDown(): boolean {
    return this.begun;
  }

  /** Called on SIGTERM or SIGINT, before the listener closes. */
  begin(): void {
    this.begun = true;
  }

  // Nest destroys modules first when the application is closed by any other path.
  onModuleDestroy(): void {
    this.begun = true;
  }
}

@Global()
@Module({ providers: [ShutdownState], exports: [ShutdownState] })
export class LifecycleModule {}
