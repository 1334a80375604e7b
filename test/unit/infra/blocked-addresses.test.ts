/** Every blocked range, its edges, and the IPv6 spellings of IPv4 addresses (SECURITY "Hardening"). */
import { describe, expect, it } from 'vitest';
import { classifyAddress } from '../../../server/infra/blocked-addresses.ts';

const blocked: [string, string, boolean][] = [
  ['0.0.0.0', 'unspecified', false],
  ['0.255.255.255', 'unspecified', false],
  ['127.0.0.1', 'loopback', true],
  ['127.255.255.254', 'loopback', true],
  ['10.0.0.1', 'private', true],
  ['172.16.0.1', 'private', true],
  ['172.31.255.255', 'private', true],
  ['192.168.1.1', 'private', true],
  ['169.254.0.1', 'link-local', true],
  ['169.254.169.254', 'cloud metadata', false],
  ['169.254.170.2', 'cloud metadata', false],
  ['100.100.100.200', 'cloud metadata', false],
  ['100.64.0.1', 'CGNAT', true],
  ['100.127.255.255', 'CGNAT', true],
  ['224.0.0.1', 'multicast', false],
  ['239.255.255.250', 'multicast', false],
  ['240.0.0.1', 'reserved', false],
  ['255.255.255.255', 'reserved', false],
  ['::', 'unspecified', false],
  ['::1', 'loopback', true],
  ['[::1]', 'loopback', true],
  ['fc00::1', 'private', true],
  ['fd12:3456::1', 'private', true],
  ['fe80::1%eth0', 'link-local', true],
  ['febf::1', 'link-local', true],
  ['fec0::1', 'private', true],
  ['ff02::1', 'multicast', false],
  ['fd00:ec2::254', 'cloud metadata', false],
  // IPv4 inside IPv6: judged as the IPv4 address.
  ['::ffff:127.0.0.1', 'loopback', true],
  ['::ffff:7f00:1', 'loopback', true],
  ['::ffff:169.254.169.254', 'cloud metadata', false],
  ['::ffff:a9fe:a9fe', 'cloud metadata', false],
  ['::10.0.0.1', 'private', true],
  ['64:ff9b::7f00:1', 'loopback', true],
  ['64:ff9b::169.254.169.254', 'cloud metadata', false],
  ['2002:c0a8:0101::1', 'private', true],
  ['2002:7f00:1::', 'loopback', true],
];

const allowed = [
  '1.1.1.1',
  '8.8.8.8',
  '93.184.215.14',
  '9.255.255.255',
  '11.0.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.167.255.255',
  '192.169.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '169.253.255.255',
  '169.255.0.0',
  '223.255.255.255',
  '2001:4860:4860::8888',
  '2606:4700:4700::1111',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
  'fbff::1',
  'fe7f::1',
];

describe('classifyAddress', () => {
  it.each(blocked)('%s is a blocked %s address (a listed host may reach it: %s)', (address, range, exemptable) => {
    expect(classifyAddress(address)).toEqual({ blocked: true, range, exemptable });
  });

  it.each(allowed)('%s is a public address', (address) => {
    expect(classifyAddress(address)).toEqual({ blocked: false });
  });

  it('refuses what is not an address at all', () => {
    expect(classifyAddress('localhost')).toMatchObject({ blocked: true, exemptable: false });
  });
});
