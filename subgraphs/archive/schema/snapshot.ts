/** The archive's GraphQL types: a snapshot, and pages of snapshots. */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Directive, Field, ID, Int, ObjectType } from 'type-graphql';
import { PageInfo } from '../../../lib/graphql/common-types.js';
import type { SnapshotRecord } from '../data/snapshot-repository.js';
import { SNAPSHOT_MEDIA_TYPE } from '../service/snapshot-service.js';

/**
 * A passport, owned by the issuer subgraph. The archive knows passports by id only, and contributes
 * their snapshots to the entity (`Passport.snapshots`).
 */
@Directive('@key(fields: "id")')
@ObjectType('Passport')
export class ArchivedPassport {
  @Field(() => ID)
  id!: string;

  static of(id: string): ArchivedPassport {
    return Object.assign(new ArchivedPassport(), { id });
  }
}

@Directive('@key(fields: "id")')
@ObjectType('Snapshot', {
  description:
    'An archival information package of a passport: a BagIt 1.0 bag serialized as one ustar archive, stored once and notarized. Its bytes are read in base64 chunks (`chunks`), which concatenated are exactly the archive GET /snapshots/{id} serves.',
})
export class Snapshot {
  @Field(() => ID)
  id!: string;

  @Field(() => ID, { description: 'The passport the snapshot is of.' })
  passportId!: string;

  @Field(() => ArchivedPassport, { description: 'The passport the snapshot is of, from the issuer service (as it is now, not as snapshotted).' })
  get passport(): ArchivedPassport {
    return ArchivedPassport.of(this.passportId);
  }

  @Field(() => Date, { description: 'When the snapshot was taken: its Bagging-Date and the mtime of every archive entry.' })
  createdAt!: Date;

  @Field(() => Int, { description: 'Length of the archive in bytes.' })
  size!: number;

  @Field(() => String, { description: 'Lowercase hex SHA-512 of the archive bytes.' })
  sha512!: string;

  @Field(() => String, { description: 'Media type of the archive bytes.' })
  mediaType!: string;

  @Field(() => String, { description: 'RFC 9530 Content-Digest field value of the archive bytes (sha-512).' })
  contentDigest!: string;

  @Field(() => String, { description: 'Strong entity tag of the archive bytes, as GET /snapshots/{id} sends it.' })
  etag!: string;

  @Field(() => String, { description: "Lowercase hex SHA-512 of the bag's tagmanifest-sha512.txt." })
  tagmanifestSha512!: string;

  @Field(() => String, { description: 'Payload-Oxum of the bag: octet count and file count of its payload.' })
  payloadOxum!: string;

  @Field(() => GraphQLJSONObject, { description: 'Signed JSON by the notary key over the archive digest, size and time, verbatim.' })
  notarization!: Record<string, unknown>;

  @Field(() => String, { description: 'kid of the notary key that signed the notarization.' })
  notaryKid!: string;

  @Field(() => Int, { description: 'Bytes per chunk; every chunk but the last is this long.' })
  chunkSize!: number;

  @Field(() => Int, { description: 'Number of chunks the archive is stored in.' })
  chunkCount!: number;

  static from(record: SnapshotRecord): Snapshot {
    const digest = Buffer.from(record.sha512, 'hex');
    return Object.assign(new Snapshot(), {
      ...record,
      mediaType: SNAPSHOT_MEDIA_TYPE,
      contentDigest: `sha-512=:${digest.toString('base64')}:`,
      etag: `"${record.sha512}"`,
    });
  }
}

@ObjectType('SnapshotConnection', { description: 'A page of snapshots, oldest first.' })
export class SnapshotConnection {
  @Field(() => [Snapshot])
  nodes!: Snapshot[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}
