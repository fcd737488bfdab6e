"""One-line constructors for the RL frameworks our users already use (docs/integrations.md).

Each framework is an optional extra and has a module of its own here, imported only by name, so
``import arboretum_env`` never imports Ray, TorchRL, Tianshou or AgileRL:

    pip install -e .[rllib]     ->  arboretum_env.integrations.rllib
    pip install -e .[torchrl]   ->  arboretum_env.integrations.torchrl
    pip install -e .[tianshou]  ->  arboretum_env.integrations.tianshou
    pip install -e .[agilerl]   ->  arboretum_env.integrations.agilerl

They sit in the agents layer of docs/design.md: they wrap the AEC env and may seat our agents
as opponents; nothing below them imports them.
"""
