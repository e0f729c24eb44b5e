import { createRequire } from "node:module";
import { encodeDeployData, encodeFunctionData, getAddress, type Abi, type Address, type Hex, type PublicClient, type TransactionReceipt } from "viem";

/**
 * The ERC-20 of the local chains (the tests' and `npm run devnet`'s), compiled here from our own
 * source with solc-js: the deployer mints, and a paused token refuses every transfer. No real token's
 * code, and no mock of one: a real contract on a real node.
 */

const TOKEN_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A small ERC-20 for the tests and the devnet: the deployer mints; a paused token refuses every transfer.
contract TestToken {
    string public name;
    string public symbol;
    uint8 public decimals;
    uint256 public totalSupply;
    bool public paused;
    address public owner;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(string memory name_, string memory symbol_, uint8 decimals_) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
        owner = msg.sender;
    }

    function mint(address to, uint256 value) external {
        require(msg.sender == owner, "owner only");
        totalSupply += value;
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
    }

    function setPaused(bool paused_) external {
        require(msg.sender == owner, "owner only");
        paused = paused_;
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    /// Many transfers in one transaction (one block): the bench's way to fill blocks quickly.
    function transferMany(address[] calldata to, uint256[] calldata value) external {
        require(to.length == value.length, "lengths");
        for (uint256 i = 0; i < to.length; i++) _move(msg.sender, to[i], value[i]);
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        require(allowed >= value, "allowance");
        if (allowed != type(uint256).max) allowance[from][msg.sender] = allowed - value;
        _move(from, to, value);
        return true;
    }

    function _move(address from, address to, uint256 value) internal {
        require(!paused, "paused");
        require(balanceOf[from] >= value, "balance");
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
`;

type Artifact = { abi: Abi; bytecode: Hex };
let compiled: Artifact | undefined;

/** The token compiled once per process (solc-js takes about a second). */
export function tokenArtifact(): Artifact {
  if (compiled) return compiled;
  const solc = createRequire(import.meta.url)("solc") as { compile(input: string): string };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: "Solidity",
        sources: { "TestToken.sol": { content: TOKEN_SOURCE } },
        settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { "*": { TestToken: ["abi", "evm.bytecode.object"] } } },
      }),
    ),
  );
  const errors = (output.errors ?? []).filter((e: { severity: string }) => e.severity === "error");
  if (errors.length) throw new Error(`solc: ${errors.map((e: { formattedMessage: string }) => e.formattedMessage).join("\n")}`);
  const contract = output.contracts["TestToken.sol"].TestToken;
  compiled = { abi: contract.abi as Abi, bytecode: `0x${contract.evm.bytecode.object}` };
  return compiled;
}

/**
 * `from` (an account the node unlocks, as anvil's are) sends a transaction; its receipt once mined.
 * A reverted transaction throws.
 */
export async function sendFrom(client: PublicClient, from: Address, transaction: { to?: Address; data?: Hex }): Promise<TransactionReceipt> {
  const hash = (await client.request({ method: "eth_sendTransaction" as never, params: [{ from, ...transaction, gas: "0x1000000" }] as never })) as Hex;
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
  return receipt;
}

/** Deploys the token from `owner` (who alone mints); its address. */
export async function deployTokenContract(client: PublicClient, owner: Address, token: { name: string; symbol: string; decimals: number }): Promise<Address> {
  const { abi, bytecode } = tokenArtifact();
  const receipt = await sendFrom(client, owner, { data: encodeDeployData({ abi, bytecode, args: [token.name, token.symbol, token.decimals] }) });
  return getAddress(receipt.contractAddress!);
}

/** `from` calls one of the token's functions (mint, transfer, transferMany, setPaused); the receipt once mined. */
export function callToken(client: PublicClient, from: Address, token: Address, functionName: string, args: unknown[]): Promise<TransactionReceipt> {
  return sendFrom(client, from, { to: token, data: encodeFunctionData({ abi: tokenArtifact().abi, functionName, args } as never) });
}
