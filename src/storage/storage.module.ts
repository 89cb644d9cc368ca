import { Global, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';
import { createFileStore, FILE_STORE, StorageService } from './storage.service.js';

@Global()
@Module({
  providers: [
    { provide: FILE_STORE, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createFileStore(config) },
    StorageService,
  ],
  exports: [StorageService],
})
export class StorageModule implements OnApplicationBootstrap {
  constructor(private readonly storage: StorageService) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.storage.clearTemporary();
  }
}
