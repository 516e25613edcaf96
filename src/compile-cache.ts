import { enableCompileCache } from 'node:module';

/**
 * Imported by main before the application's modules load: V8 then keeps the code it
 * compiles in a cache on disk (NODE_COMPILE_CACHE, else a directory in the system's
 * temporary directory, keyed by each file's content), and later starts skip compiling.
 * Compiling modules was about a fifth of the CPU of a start. Where the cache cannot be
 * written, the server starts as before.
 */
enableCompileCache();
