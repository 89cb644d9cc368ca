import { Global, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { StorageService } from './storage.service.js';

@Global()
@Module({ providers: [StorageService], exports: [StorageService] })
export class StorageModule implements OnApplicationBootstrap {
  constructor(private readonly storage: StorageService) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.storage.clearTemporary();
  }
}
